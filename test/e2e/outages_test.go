package e2e

import (
	"encoding/json"
	"sync"
	"time"
)

// apiOutages are the windows in which a test restarted kube-apiserver or
// etcd. A request refused as forbidden inside one is the restarting server's
// answer, not a permission config/rbac lacks, so the controllers' RBAC log
// check passes over it.
var apiOutages struct {
	sync.Mutex
	windows [][2]time.Time
}

// duringAPIOutage reports whether the JSON log line was written during a
// recorded outage (by its "ts", seconds since the epoch).
func duringAPIOutage(line string) bool {
	var l struct {
		TS float64 `json:"ts"`
	}
	if json.Unmarshal([]byte(line), &l) != nil || l.TS == 0 {
		return false
	}
	at := time.Unix(0, int64(l.TS*1e9))
	apiOutages.Lock()
	defer apiOutages.Unlock()
	for _, w := range apiOutages.windows {
		if !at.Before(w[0]) && !at.After(w[1]) {
			return true
		}
	}
	return false
}
