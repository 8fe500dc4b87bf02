package autoresize

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
)

var (
	usedRatio = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "claimwarden_autoresize_used_ratio",
		Help: "Used bytes over capacity of the volume of each claim of a StatefulSet autoresize watches, as last read.",
	}, []string{"cluster", "namespace", "persistentvolumeclaim"})
	secondsToFull = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "claimwarden_autoresize_seconds_to_full",
		Help: "When the volume of a claim autoresize watches is full at its recent growth; absent while it does not grow.",
	}, []string{"cluster", "namespace", "persistentvolumeclaim"})
	checksTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "claimwarden_autoresize_checks_total",
		Help: "Rounds over a cluster's opted-in StatefulSets: one per autoresize.interval, however many StatefulSets, once each was checked or found stuck.",
	}, []string{"cluster"})
	stuckChecks = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "claimwarden_autoresize_stuck_checks",
		Help: "Checks of a cluster's StatefulSets still running past their deadline (autoresize.checkTimeout) and its grace: work that ignores its deadline.",
	}, []string{"cluster"})
	pullRequestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "claimwarden_autoresize_pull_requests_total",
		Help: "Autoresize pull requests by event: opened, updated, and merged or closed (unmerged) as autoresize next saw them.",
	}, []string{"event"})
)

func init() {
	metrics.Registry.MustRegister(usedRatio, secondsToFull, checksTotal, stuckChecks, pullRequestsTotal)
}

// Metrics remembers which pull requests' ends were counted, and which
// claims' series were exported, for the Controller of one cluster.
type Metrics struct {
	// cluster is the cluster label (rollout.ClusterLabel).
	cluster string
	mu      sync.Mutex
	// ended is, per key seen, the pull request whose merge or close was
	// counted or that had ended when the key was first seen; 0 for none.
	ended map[string]int64
	// exported and observed are the claims (namespace/name) whose series
	// the last round and this one exported.
	exported, observed map[[2]string]bool
}

// NewMetrics returns empty Metrics of cluster (Options.Cluster).
func NewMetrics(cluster string) *Metrics {
	return &Metrics{cluster: rollout.ClusterLabel(cluster), ended: map[string]int64{}, exported: map[[2]string]bool{}, observed: map[[2]string]bool{}}
}

// observe exports the claims' usage; a claim whose series disagree has
// none to export.
func (m *Metrics) observe(claims []corev1.PersistentVolumeClaim, used map[string]usage.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range claims {
		pvc := &claims[i]
		u, ok := used[pvc.Name]
		if !ok || against(u, pvc) != "" {
			continue
		}
		m.observed[[2]string{pvc.Namespace, pvc.Name}] = true
		usedRatio.WithLabelValues(m.cluster, pvc.Namespace, pvc.Name).Set(u.UsedFraction())
		if d, ok := u.TimeToFull(); ok {
			secondsToFull.WithLabelValues(m.cluster, pvc.Namespace, pvc.Name).Set(d.Seconds())
		} else {
			secondsToFull.DeleteLabelValues(m.cluster, pvc.Namespace, pvc.Name)
		}
	}
}

// sweep ends a round, which it counts: the series of claims it did not observe (their
// StatefulSet left autoresize or was deleted, their usage is gone) are
// deleted, so the series are bounded by the claims watched now.
func (m *Metrics) sweep() {
	checksTotal.WithLabelValues(m.cluster).Inc()
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.exported {
		if !m.observed[k] {
			usedRatio.DeleteLabelValues(m.cluster, k[0], k[1])
			secondsToFull.DeleteLabelValues(m.cluster, k[0], k[1])
		}
	}
	m.exported, m.observed = m.observed, map[[2]string]bool{}
}

// seen counts the end of key's last pull request once. The first look at
// a key after a start counts nothing: its pull request may have ended
// before, and been counted by the process before.
func (m *Metrics) seen(key string, last *pullrequest.PullRequest) {
	m.mu.Lock()
	defer m.mu.Unlock()
	counted, known := m.ended[key]
	switch {
	case last == nil || last.State == pullrequest.Open:
		if !known {
			m.ended[key] = 0
		}
	case !known:
		m.ended[key] = last.Number
	case counted != last.Number:
		m.ended[key] = last.Number
		pullRequestsTotal.WithLabelValues(string(last.State)).Inc()
	}
}

// proposed counts a pull request opened or updated.
func (m *Metrics) proposed(last *pullrequest.PullRequest, pr pullrequest.PullRequest) {
	if last != nil && last.State == pullrequest.Open && last.Number == pr.Number {
		pullRequestsTotal.WithLabelValues("updated").Inc()
		return
	}
	pullRequestsTotal.WithLabelValues("opened").Inc()
}

// stuck exports how many of the cluster's checks are stuck.
func (m *Metrics) stuck(n int) {
	stuckChecks.WithLabelValues(m.cluster).Set(float64(n))
}
