package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/kubernetes"

	"github.com/claimwarden/claimwarden/test/benchkit"
)

// apiServerWatches is the number of WATCH requests kube-apiserver of cl is
// serving (apiserver_longrunning_requests), from every client: the
// difference before and with claimwarden running is claimwarden's.
func apiServerWatches(ctx context.Context, cl *cluster) (int, error) {
	cs, err := kubernetes.NewForConfig(cl.env.Config)
	if err != nil {
		return 0, err
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("the %s's kube-apiserver /metrics: %w", cl.name, err)
	}
	fams, err := benchkit.ParseMetrics(bytes.NewReader(raw))
	if err != nil {
		return 0, fmt.Errorf("the %s's kube-apiserver /metrics: %w", cl.name, err)
	}
	fam, ok := fams["apiserver_longrunning_requests"]
	if !ok {
		return 0, fmt.Errorf("the %s's kube-apiserver exports no apiserver_longrunning_requests", cl.name)
	}
	return int(benchkit.Sum(fam, func(m *dto.Metric) bool { return benchkit.Label(m, "verb") == "WATCH" })), nil
}

// loadAverage is the first field of /proc/loadavg: the machine's load over
// the last minute, which says how much others shared the cores.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
