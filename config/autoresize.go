package config

import (
	"fmt"
	"time"

	"github.com/claimwarden/claimwarden/integrations/autoresize"
	"github.com/claimwarden/claimwarden/integrations/sandbox"
	"github.com/claimwarden/claimwarden/integrations/spokes"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Autoresize configures growing volumes before they fill, through pull
// requests: usage is read from a Prometheus HTTP API, the policies decide
// (the autoresize policy and its parameters), and the resize is proposed as
// a pull request editing the line in Git that sets the size. Off while
// Namespaces is empty (the default).
type Autoresize struct {
	// Namespaces opt namespaces in, each with the repositories its pull
	// requests may go to; for a namespace the first entry naming it or
	// "*" applies. File only.
	Namespaces []AutoresizeNamespace `mapstructure:"namespaces"`

	// Prometheus is the Prometheus HTTP API the kubelets' volume
	// statistics are read from. Required with Namespaces.
	Prometheus Prometheus `mapstructure:"prometheus"`

	// Interval is how often usage is read and the policies asked;
	// default 5m.
	Interval time.Duration `mapstructure:"interval"`

	// Window is how far back the growth rate is measured; default 6h.
	Window time.Duration `mapstructure:"window"`

	// Render bounds each render of a tenant's chart (the value that sets
	// a size is found by rendering): it runs in a child process.
	Render AutoresizeRender `mapstructure:"render"`

	// Concurrency is how many StatefulSets are checked at once; default 4.
	// A check that hangs holds up one of them until its deadline, not the
	// others.
	Concurrency int `mapstructure:"concurrency"`

	// CheckTimeout is the deadline of one StatefulSet's check (Prometheus,
	// the Git host, the policies, the render); default 2m.
	CheckTimeout time.Duration `mapstructure:"checkTimeout"`

	// Hosts are the Git hosts pull requests are opened on, with
	// credentials that may push a branch and open pull requests: separate
	// from gitStatus.hosts, whose tokens need only post statuses. File
	// only; required with Namespaces.
	Hosts []GitHost `mapstructure:"hosts"`
}

// AutoresizeRender bounds the child process a chart is rendered in:
// a chart is code its tenant wrote (templates may loop or build huge
// strings), so it never runs in the controller's process.
type AutoresizeRender struct {
	// Timeout is the wall-clock time of one render job; default 30s.
	Timeout time.Duration `mapstructure:"timeout"`
	// CPU is the CPU time of one render job; default 20s.
	CPU time.Duration `mapstructure:"cpu"`
	// MemoryBytes is the heap a render job may use; default 128 MiB.
	MemoryBytes int64 `mapstructure:"memoryBytes"`
	// Concurrency is how many render jobs run at once; default 2. Each
	// may use MemoryBytes beside the controller, within the Deployment's
	// memory limit.
	Concurrency int `mapstructure:"concurrency"`
}

// Limits are the sandbox's bounds as configured.
func (r AutoresizeRender) Limits() sandbox.Limits {
	return sandbox.Limits{Timeout: r.Timeout, CPU: r.CPU, Memory: r.MemoryBytes}
}

// AutoresizeNamespace opts a namespace in.
type AutoresizeNamespace struct {
	// Namespace, or "*" for every namespace. Required.
	Namespace string `mapstructure:"namespace"`

	// RepositoryPrefixes are the repositories, or the owners or groups
	// above them, the namespace's pull requests may go to. The repository
	// is the one the namespace's GitOps objects name, and the pull request
	// is opened with the operator's credentials: a tenant gets pull
	// requests only where the operator allows. At least one.
	RepositoryPrefixes []string `mapstructure:"repositoryPrefixes"`

	// AllStatefulSets opts in every StatefulSet of the namespace (one
	// annotated claimwarden.dev/autoresize: "false" stays out); default
	// false: only StatefulSets annotated claimwarden.dev/autoresize: "true".
	AllStatefulSets bool `mapstructure:"allStatefulSets"`
}

// Prometheus is a Prometheus HTTP API (Prometheus, Thanos, Mimir,
// VictoriaMetrics...).
type Prometheus struct {
	// URL is the API's base URL, e.g. http://prometheus.monitoring:9090.
	URL string `mapstructure:"url"`

	// BearerTokenFile is a file holding a bearer token sent with every
	// query, re-read on each request (a projected service account token).
	BearerTokenFile string `mapstructure:"bearerTokenFile"`

	// CAFile is a PEM file of CAs trusted for an https URL besides the
	// system's.
	CAFile string `mapstructure:"caFile"`

	// SeriesSelector is the PromQL label matchers, comma-separated,
	// without braces, a volume statistics series must match to be read
	// (usage.ParseSelector): the kubelet's, not a series a tenant
	// publishes under the same name. Default usage.DefaultSelector.
	SeriesSelector string `mapstructure:"seriesSelector"`

	// ClusterLabel is the label naming the cluster a series was scraped
	// in, on an API that holds several clusters' series (Thanos, Mimir, a
	// federation): an external label, or one the scrape configuration
	// sets, never one a target can set. Required with clusters listed:
	// each cluster's claims are read from its own series only, a spoke's
	// where the label is the spoke's name (clusters[].name), claimwarden's
	// own cluster's where it is ClusterLabelValue.
	ClusterLabel string `mapstructure:"clusterLabel"`

	// ClusterLabelValue is ClusterLabel's value on the series of the
	// cluster claimwarden runs in; default "in-cluster".
	ClusterLabelValue string `mapstructure:"clusterLabelValue"`
}

// Selector is the series selector of the usage of cluster (config
// clusters; "" claimwarden's own): SeriesSelector, and with a
// ClusterLabel that cluster's series only.
func (p Prometheus) Selector(cluster string) (usage.Selector, error) {
	sel, err := usage.ParseSelector(p.SeriesSelector)
	if err != nil {
		return nil, err
	}
	value := cluster
	if value == "" {
		value = p.ClusterLabelValue
	}
	return sel.InCluster(p.ClusterLabel, value), nil
}

// Enabled reports whether autoresize proposes anything.
func (a Autoresize) Enabled() bool { return len(a.Namespaces) > 0 }

// Rules are the namespaces' rules as the controller takes them.
func (a Autoresize) Rules() []autoresize.Rule {
	out := make([]autoresize.Rule, len(a.Namespaces))
	for i, n := range a.Namespaces {
		out[i] = autoresize.Rule{Namespace: n.Namespace, RepositoryPrefixes: n.RepositoryPrefixes, AllStatefulSets: n.AllStatefulSets}
	}
	return out
}

// maxAutoresizeConcurrency bounds autoresize.concurrency: each check may
// hold a render, a Prometheus query and Git host requests at once.
const maxAutoresizeConcurrency = 64

func defaultAutoresize() Autoresize {
	return Autoresize{Interval: autoresize.DefaultInterval, Window: usage.DefaultWindow,
		Prometheus:  Prometheus{SeriesSelector: usage.DefaultSelector, ClusterLabelValue: spokes.InClusterName},
		Concurrency: autoresize.DefaultConcurrency, CheckTimeout: autoresize.DefaultCheckTimeout,
		Render: AutoresizeRender{
			Timeout: sandbox.DefaultLimits.Timeout, CPU: sandbox.DefaultLimits.CPU, MemoryBytes: sandbox.DefaultLimits.Memory,
			Concurrency: sandbox.DefaultConcurrency,
		}}
}

func (r AutoresizeRender) validate(bad func(key string, value any, format string, args ...any)) {
	if r.Timeout < time.Second {
		bad("autoresize.render.timeout", r.Timeout, "is shorter than 1s: a render starts a process")
	}
	if r.CPU < time.Second {
		bad("autoresize.render.cpu", r.CPU, "is shorter than 1s: the kernel counts CPU time in seconds")
	}
	if r.MemoryBytes < 32<<20 {
		bad("autoresize.render.memoryBytes", r.MemoryBytes, "is less than 32 MiB: a chart loads and renders in that at least")
	}
	if r.Concurrency < 1 || r.Concurrency > 16 {
		bad("autoresize.render.concurrency", r.Concurrency, "is not between 1 and 16")
	}
}

func (a Autoresize) validate(bad func(key string, value any, format string, args ...any)) {
	if a.Interval < time.Second {
		bad("autoresize.interval", a.Interval, "is shorter than 1s: each check queries Prometheus and the Git host")
	}
	if a.Window < time.Minute {
		bad("autoresize.window", a.Window, "is shorter than 1m: the growth rate needs samples")
	}
	a.Render.validate(bad)
	if a.Concurrency < 1 || a.Concurrency > maxAutoresizeConcurrency {
		bad("autoresize.concurrency", a.Concurrency, "is not between 1 and %d: it is how many StatefulSets are checked at once", maxAutoresizeConcurrency)
	}
	if a.CheckTimeout < 10*time.Second || a.CheckTimeout > time.Hour {
		bad("autoresize.checkTimeout", a.CheckTimeout, "is not between 10s and 1h: it is the deadline of one StatefulSet's check")
	}
	for i, n := range a.Namespaces {
		validateRepositoryRule(fmt.Sprintf("autoresize.namespaces[%d]", i), n.Namespace, n.RepositoryPrefixes,
			"list the repositories (or their owners) the namespace's pull requests may go to", bad)
	}
	validateHosts("autoresize.hosts", a.Hosts, bad)
	sel, err := usage.ParseSelector(a.Prometheus.SeriesSelector)
	if err != nil {
		bad("autoresize.prometheus.seriesSelector", a.Prometheus.SeriesSelector, "is not PromQL label matchers (comma-separated, without braces): %v", err)
	}
	if l := a.Prometheus.ClusterLabel; l != "" {
		labelErr := usage.CheckLabelName(l)
		switch {
		case labelErr != nil:
			bad("autoresize.prometheus.clusterLabel", l, "is not a label name claimwarden may match on: %v", labelErr)
		case sel.Names(l):
			bad("autoresize.prometheus.seriesSelector", a.Prometheus.SeriesSelector, "matches on %s, the clusterLabel: claimwarden matches each cluster's series on it itself", l)
		}
		if a.Prometheus.ClusterLabelValue == "" {
			bad("autoresize.prometheus.clusterLabelValue", "", "is empty: it is the clusterLabel's value on the series of the cluster claimwarden runs in")
		}
	}
	if !a.Enabled() {
		return
	}
	if a.Prometheus.URL == "" {
		bad("autoresize.prometheus.url", "", "is empty: autoresize reads the volumes' usage from a Prometheus HTTP API")
	} else if u, ok := httpURL("autoresize.prometheus.url", a.Prometheus.URL, bad); ok && u.User != nil {
		bad("autoresize.prometheus.url", proposal.RedactURL(a.Prometheus.URL), "holds a user name or password: use bearerTokenFile")
	}
	if len(a.Hosts) == 0 {
		bad("autoresize.hosts", "", "is empty: list the Git hosts pull requests are opened on, with write credentials")
	}
}
