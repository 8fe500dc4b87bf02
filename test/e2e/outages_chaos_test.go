//go:build chaos

package e2e

import "time"

// outageGrace is how long after /readyz answers again a restarted
// kube-apiserver may still refuse requests as forbidden: its authorizer's
// caches fill while clients are already reconnecting.
const outageGrace = 5 * time.Second

// noteAPIOutage records an outage from from until the API was ready again at to.
func noteAPIOutage(from, to time.Time) {
	apiOutages.Lock()
	defer apiOutages.Unlock()
	apiOutages.windows = append(apiOutages.windows, [2]time.Time{from, to.Add(outageGrace)})
}
