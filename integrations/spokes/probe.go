package spokes

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// probeTimeout bounds one probe: a spoke that takes longer is as good as
// unreachable for a rollout.
const probeTimeout = 10 * time.Second

var reachable = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "claimwarden_cluster_reachable",
	Help: "1 while a configured spoke's API server answers, 0 while it does not (its rollouts wait); by cluster.",
}, []string{"cluster"})

func init() { metrics.Registry.MustRegister(reachable) }

// Probe says whether a spoke's API server answers (its /version), every
// Interval: the metric claimwarden_cluster_reachable and a log line when
// it changes. An unreachable spoke stalls only its own rollouts, which
// nothing else would show until a person looks at them. A
// manager.Runnable, on every replica (the metric is each process's view).
type Probe struct {
	Spoke    Spoke
	Interval time.Duration
	Log      logr.Logger
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (*Probe) NeedLeaderElection() bool { return false }

// Start probes until ctx ends.
func (p *Probe) Start(ctx context.Context) error {
	cfg := rest.CopyConfig(p.Spoke.Config)
	cfg.Timeout = probeTimeout
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	gauge := reachable.WithLabelValues(p.Spoke.Name)
	log := p.Log.WithValues("cluster", p.Spoke.Name, "server", p.Spoke.Server)
	known, was := false, false
	wait.JitterUntilWithContext(ctx, func(context.Context) {
		_, err := client.ServerVersion()
		up := err == nil
		if up {
			gauge.Set(1)
		} else {
			gauge.Set(0)
		}
		switch {
		case up && (!known || !was):
			log.Info("the spoke's API server answers")
		case !up && (!known || was):
			log.Error(err, "the spoke's API server does not answer: its rollouts wait until it does")
		}
		known, was = true, up
	}, p.Interval, 0.1, true)
	return nil
}
