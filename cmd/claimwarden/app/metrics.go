package app

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/claimwarden/claimwarden/policies"
)

// health is what the process-level gauges read at scrape time: the policy
// engine and the commit-status backlog of the running controller. Tests
// start several controllers in one process; the gauges, registered once,
// read the newest.
type health struct {
	policies atomic.Pointer[policies.Engine]
	pending  atomic.Pointer[func() int]
}

var (
	current      health
	registerOnce sync.Once
)

// exportHealth makes engine and pending (nil without commit statuses) what
// claimwarden_policies_ready, claimwarden_policies_stale and
// claimwarden_commit_statuses_pending report; the alerts of the chart's
// PrometheusRule watch them.
func exportHealth(engine *policies.Engine, pending func() int) {
	current.policies.Store(engine)
	if pending == nil {
		pending = func() int { return 0 }
	}
	current.pending.Store(&pending)
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "claimwarden_policies_ready",
				Help: "1 when the policies compiled and every bundle loaded; 0 while every claim change is denied for want of policies.",
			}, func() float64 { return bit(current.status().Ready) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "claimwarden_policies_stale",
				Help: "1 when a policy bundle's last download failed and its last good version is in use.",
			}, func() float64 { return bit(current.status().Stale) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "claimwarden_commit_statuses_pending",
				Help: "Commits with a status not yet posted to their Git host: queued, waiting for a retry or in flight.",
			}, func() float64 { return float64((*current.pending.Load())()) }),
		)
	})
}

func (h *health) status() policies.Status {
	if e := h.policies.Load(); e != nil {
		return e.Status()
	}
	return policies.Status{}
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
