// Package config loads the configuration of `claimwarden run`.
//
// Every key can be set in a YAML file (--config PATH), and most also in the
// environment (CLAIMWARDEN_ followed by the key upper-cased, dots as
// underscores) and by a flag; a flag wins over the environment, the environment
// over the file, the file over the default. Lists of objects and free-form maps
// (policies.bundles, policies.params, policies.decisionLogs, gitStatus.hosts,
// gitStatus.workloadAnnotations, clusters) have no flat spelling and are set in
// the file only. Keys lists the names each key goes by;
// the comments on Config and its nested types are the reference documentation
// of each key. Durations are written as Go durations: "500ms", "10s", "1m30s".
//
// Unknown keys in the file (inside bundle and host entries too), unknown CLAIMWARDEN_*
// variables and invalid values are errors that name the key (or variable) and
// the value, so that a typo stops the controller instead of being silently
// ignored. Below policies.params and policies.decisionLogs every key is
// accepted: they are handed on to the policies and to OPA as written.
package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// EnvPrefix starts the name of every environment variable read as configuration.
const EnvPrefix = "CLAIMWARDEN_"

// DefaultLeaderElectionNamespace holds the leader election Lease when the
// controller runs outside a Pod and no namespace is configured.
const DefaultLeaderElectionNamespace = "claimwarden-system"

// DefaultKubeAPIQPS is the client-side limit when kubeAPIQPS is 0 and the
// API server has no API Priority and Fairness (Flux's default).
const DefaultKubeAPIQPS = 50

// Config is the configuration of `claimwarden run`. The mapstructure tag of a
// field is its key in the configuration file.
type Config struct {
	// Kubeconfig is the path of a kubeconfig file to reach the API server with.
	// Empty (the default) uses the in-cluster configuration of the Pod's
	// ServiceAccount.
	Kubeconfig string `mapstructure:"kubeconfig"`

	// Namespaces limits the controller to StatefulSets and claims in these
	// namespaces. Empty (the default) watches all namespaces. In the environment
	// the names are separated by commas.
	Namespaces []string `mapstructure:"namespaces"`

	// LabelSelector limits the controller to StatefulSets whose labels match this
	// Kubernetes label selector, e.g. "app in (db,cache),tier!=test". Empty (the
	// default) selects every StatefulSet.
	LabelSelector string `mapstructure:"labelSelector"`

	// UpdateStrategy is how existing claims follow a changed volumeClaimTemplate
	// when the StatefulSet's claimwarden.dev/update-strategy annotation does not
	// say: InPlace (the default) patches existing claims where only mutable
	// fields differ; OnClaimDelete leaves them alone, so only newly created
	// claims get the new template.
	UpdateStrategy v1alpha1.UpdateStrategy `mapstructure:"updateStrategy"`

	// MaxConcurrentPatches is how many claims of one StatefulSet are patched
	// before waiting for them to become compatible; at least 1, default 1.
	MaxConcurrentPatches int `mapstructure:"maxConcurrentPatches"`

	// RestartForExpansion lets the controller evict, one at a time through
	// the Eviction API, the Pods whose claims wait for a file system resize
	// that needs the volume mounted again (FileSystemResizePending), in
	// StatefulSets without the claimwarden.dev/restart-for-expansion
	// annotation. Off by default: such claims are reported
	// (WaitingForRestart) and wait for someone to restart their Pods.
	// Needs config/components/restarts.
	RestartForExpansion bool `mapstructure:"restartForExpansion"`

	// PolicyReports writes, where the OpenReports CRDs
	// (reports.openreports.io) are installed, one Report per namespace
	// with each StatefulSet's verdict, which Policy Reporter shows beside
	// Kyverno's; off where they are not. Needs
	// config/components/policy-reports.
	PolicyReports bool `mapstructure:"policyReports"`

	// MaxClaimsPerStatefulSet bounds templates × replicas of one StatefulSet:
	// one beyond it is Stalled before any work, so that a tenant's
	// "replicas: 2147483647" cannot exhaust the controller's memory.
	// Default diff.DefaultMaxClaims (1000), at least 1.
	MaxClaimsPerStatefulSet int `mapstructure:"maxClaimsPerStatefulSet"`

	// Workers is how many StatefulSets are reconciled at once (one StatefulSet
	// is never reconciled by two workers); default 16. A reconcile waits on
	// the API server for nearly all its time (5 % of a core for 600 claims
	// with 4 workers busy 92 %), so workers, not CPU, bound a mass resize.
	Workers int `mapstructure:"workers"`

	// KubeAPIQPS and KubeAPIBurst are client-go's client-side limit of the
	// requests per second the controller sends to the API server. 0 (the
	// default) follows Flux and controller-runtime: no client-side limit when
	// the API server has API Priority and Fairness (every supported release;
	// the server then queues and sheds load fairly), else DefaultKubeAPIQPS.
	// A positive value is a limit always in force; a negative one, never a
	// limit. KubeAPIBurst (default 300) is the burst above a limit.
	KubeAPIQPS   float32 `mapstructure:"kubeAPIQPS"`
	KubeAPIBurst int     `mapstructure:"kubeAPIBurst"`

	// MetricsAddr is the host:port the Prometheus metrics endpoint (/metrics)
	// listens on; default ":8080", "0" disables it.
	MetricsAddr string `mapstructure:"metricsAddr"`

	// HealthAddr is the host:port of the liveness (/healthz) and readiness
	// (/readyz) probes; default ":8081", "0" disables them.
	HealthAddr string `mapstructure:"healthAddr"`

	// PprofAddr is the host:port of Go's /debug/pprof profiles (served by
	// controller-runtime); default "0", off: profiles show the process's
	// insides, so they are opened on purpose, for a diagnosis.
	PprofAddr string `mapstructure:"pprofAddr"`

	// LeaderElection keeps a single active replica.
	LeaderElection LeaderElection `mapstructure:"leaderElection"`

	// JournalKey names the Secret whose key seals the crash journal
	// (VolumeClaimRollout status.pendingRecreate).
	JournalKey JournalKey `mapstructure:"journalKey"`

	// Log configures the structured logs written to standard error.
	Log Log `mapstructure:"log"`

	// Policies configures the OPA/Rego policies that decide every claim change.
	Policies Policies `mapstructure:"policies"`

	// GitStatus configures the commit statuses posted on the commit that proposed a rollout.
	GitStatus GitStatus `mapstructure:"gitStatus"`

	// Flux configures the Flux (Kustomization) integration.
	Flux Flux `mapstructure:"flux"`

	// ArgoCD configures the Argo CD (Application) integration.
	ArgoCD ArgoCD `mapstructure:"argocd"`

	// Helm configures the integration with plain Helm (release records).
	Helm Helm `mapstructure:"helm"`

	// Autoresize configures growing volumes before they fill, through pull requests.
	Autoresize Autoresize `mapstructure:"autoresize"`

	// Clusters are the spoke clusters whose StatefulSets claimwarden
	// converges besides its own, each with the Secret of its credential.
	// File only; empty (the default): only the cluster claimwarden runs in.
	Clusters []Cluster `mapstructure:"clusters"`

	// Sharding splits the tool objects between several instances by
	// Flux's sharding.fluxcd.io/key label; none by default.
	Sharding Sharding `mapstructure:"sharding"`
}

// HasSources reports whether any source of proposals is enabled: only then
// does claimwarden re-create StatefulSets (the convergence).
func (c Config) HasSources() bool {
	return c.Flux.Enabled || c.Flux.HelmReleases || c.ArgoCD.Enabled || c.Helm.Enabled
}

// LeaderElection configures the Lease that elects the one active replica.
type LeaderElection struct {
	// Enabled turns leader election on (the default). Turn it off only when
	// exactly one replica runs, e.g. outside the cluster during development.
	Enabled bool `mapstructure:"enabled"`

	// Namespace holds the Lease. Default: the namespace of the Pod the controller
	// runs in, or "claimwarden-system" outside a Pod.
	Namespace string `mapstructure:"namespace"`

	// ID is the name of the Lease; default "claimwarden.claimwarden.dev".
	// Replicas compete for the Lease of the same name.
	ID string `mapstructure:"id"`
}

// JournalKey names the Secret holding the key that seals the crash journal,
// so that whoever may write VolumeClaimRollout status cannot make the
// controller create a StatefulSet. The controller creates the Secret, with a
// random key, when it does not exist.
type JournalKey struct {
	// Namespace of the Secret. Default: the namespace of the Pod the
	// controller runs in, or "claimwarden-system" outside a Pod.
	Namespace string `mapstructure:"namespace"`

	// SecretName is the Secret's name; default "claimwarden-journal-key".
	SecretName string `mapstructure:"secretName"`
}

// Log configures logging.
type Log struct {
	// Level is the lowest level written: debug, info (the default) or error.
	Level string `mapstructure:"level"`

	// Format is json (the default), one object per line for log collectors, or
	// console, human-readable text.
	Format string `mapstructure:"format"`
}

// Allowed values, in the order error messages list them.
var (
	updateStrategies = []string{string(v1alpha1.InPlace), string(v1alpha1.OnClaimDelete)}
	logLevels        = []string{"debug", "info", "error"}
	logFormats       = []string{"json", "console"}
)

// Default returns the configuration used where nothing is set. Its
// LeaderElection.Namespace and Policies.ConfigMapNamespace depend on where it
// runs: see podNamespace.
func Default() Config {
	ns := podNamespace()
	return Config{
		UpdateStrategy:          v1alpha1.InPlace,
		MaxConcurrentPatches:    1,
		MaxClaimsPerStatefulSet: diff.DefaultMaxClaims,
		Workers:                 16,
		KubeAPIBurst:            300,
		MetricsAddr:             ":8080",
		HealthAddr:              ":8081",
		PprofAddr:               "0",
		LeaderElection: LeaderElection{
			Enabled:   true,
			Namespace: ns,
			ID:        DefaultLeaderElectionID,
		},
		JournalKey: JournalKey{Namespace: ns, SecretName: "claimwarden-journal-key"},
		Log:        Log{Level: "info", Format: "json"},
		Policies:   defaultPolicies(ns),
		GitStatus:  defaultGitStatus(),
		Flux:       defaultFlux(),
		ArgoCD:     defaultArgoCD(ns),
		Helm:       defaultHelm(),
		Autoresize: defaultAutoresize(),
	}
}

// Key names one configuration key in each place it can be set.
type Key struct {
	// Name is the key in the configuration file; dots separate nesting levels.
	Name string
	// Flag is the flag of `claimwarden run`, without the leading dashes; empty
	// for a key set in the file only.
	Flag string
	// Env is the environment variable; empty for a key set in the file only.
	Env string
}

// FileOnly reports whether the key can be set in the configuration file only.
func (k Key) FileOnly() bool { return k.Flag == "" }

// keys pairs each file key with its flag, in the order of Config's fields. An
// empty flag marks a key set in the file only; it has no variable either.
var keys = []struct{ name, flag string }{
	{"kubeconfig", "kubeconfig"},
	{"namespaces", "namespaces"},
	{"labelSelector", "label-selector"},
	{"updateStrategy", "update-strategy"},
	{"maxConcurrentPatches", "max-concurrent-patches"},
	{"restartForExpansion", "restart-for-expansion"},
	{"policyReports", "policy-reports"},
	{"maxClaimsPerStatefulSet", "max-claims-per-statefulset"},
	{"workers", "workers"},
	{"kubeAPIQPS", "kube-api-qps"},
	{"kubeAPIBurst", "kube-api-burst"},
	{"metricsAddr", "metrics-addr"},
	{"healthAddr", "health-addr"},
	{"pprofAddr", "pprof-addr"},
	{"leaderElection.enabled", "leader-election"},
	{"leaderElection.namespace", "leader-election-namespace"},
	{"leaderElection.id", "leader-election-id"},
	{"journalKey.namespace", "journal-key-namespace"},
	{"journalKey.secretName", "journal-key-secret-name"},
	{"log.level", "log-level"},
	{"log.format", "log-format"},
	{"policies.dirs", "policy-dir"},
	{"policies.pollInterval", "policy-poll-interval"},
	{"policies.timeout", "policy-timeout"},
	{"policies.valueLimitBytes", "policy-value-limit-bytes"},
	{"policies.memoryBudgetBytes", "policy-memory-budget-bytes"},
	{"policies.allowNetworkBuiltins", "policy-allow-network-builtins"},
	{"policies.configMaps", "policy-configmaps"},
	{"policies.configMapNamespace", "policy-configmap-namespace"},
	{"policies.bundles", ""},
	{"policies.params", ""},
	{"policies.decisionLogs", ""},
	{"policies.decisionLogMask", "policy-decision-log-mask"},
	{"gitStatus.contextPrefix", "git-status-context-prefix"},
	{"gitStatus.targetURL", "git-status-target-url"},
	{"gitStatus.fluxEventsAddr", "git-status-flux-events-addr"},
	{"gitStatus.hosts", ""},
	{"gitStatus.workloadAnnotations", ""},
	{"flux.enabled", "flux"},
	{"flux.namespaces", "flux-namespaces"},
	{"flux.artifactCacheDir", "flux-artifact-cache-dir"},
	{"flux.maxArtifactSize", "flux-max-artifact-size"},
	{"flux.maxCacheSize", "flux-max-cache-size"},
	{"flux.maxBuildBytes", "flux-max-build-bytes"},
	{"flux.maxBuildNodes", "flux-max-build-nodes"},
	{"flux.helmReleases", "flux-helm-releases"},
	{"flux.maxReleaseBytes", "flux-max-release-bytes"},
	{"flux.defaultServiceAccount", "flux-default-service-account"},
	{"flux.noCrossNamespaceRefs", "flux-no-cross-namespace-refs"},
	{"argocd.enabled", "argocd"},
	{"argocd.namespaces", "argocd-namespaces"},
	{"argocd.server", "argocd-server"},
	{"argocd.tokenSecretRef.namespace", "argocd-token-secret-namespace"},
	{"argocd.tokenSecretRef.name", "argocd-token-secret-name"},
	{"argocd.tokenSecretRef.key", "argocd-token-secret-key"},
	{"argocd.insecure", "argocd-insecure"},
	{"argocd.caFile", "argocd-ca-file"},
	{"argocd.plaintext", "argocd-plaintext"},
	{"argocd.syncManualApps", "argocd-sync-manual-apps"},
	{"argocd.controlPlaneNamespace", "argocd-control-plane-namespace"},
	{"helm.enabled", "helm"},
	{"helm.namespaces", "helm-namespaces"},
	{"helm.maxReleaseBytes", "helm-max-release-bytes"},
	{"autoresize.namespaces", ""},
	{"autoresize.prometheus.url", "autoresize-prometheus-url"},
	{"autoresize.prometheus.bearerTokenFile", "autoresize-prometheus-bearer-token-file"},
	{"autoresize.prometheus.caFile", "autoresize-prometheus-ca-file"},
	{"autoresize.prometheus.seriesSelector", "autoresize-prometheus-series-selector"},
	{"autoresize.prometheus.clusterLabel", "autoresize-prometheus-cluster-label"},
	{"autoresize.prometheus.clusterLabelValue", "autoresize-prometheus-cluster-label-value"},
	{"autoresize.interval", "autoresize-interval"},
	{"autoresize.window", "autoresize-window"},
	{"autoresize.render.timeout", "autoresize-render-timeout"},
	{"autoresize.render.cpu", "autoresize-render-cpu"},
	{"autoresize.render.memoryBytes", "autoresize-render-memory-bytes"},
	{"autoresize.render.concurrency", "autoresize-render-concurrency"},
	{"autoresize.concurrency", "autoresize-concurrency"},
	{"autoresize.checkTimeout", "autoresize-check-timeout"},
	{"autoresize.hosts", ""},
	{"clusters", ""},
	{"sharding.key", "sharding-key"},
	{"sharding.shards", "sharding-shards"},
}

// freeForm are the keys below which any key is accepted: their maps are handed
// on to the policies and to OPA as written, so only they know the keys.
var freeForm = []string{"policies.params", "policies.decisionLogs"}

// listsOfObjects are the file-only keys holding a list of objects. Viper does
// not see into list entries, so decoding finds the unknown keys there;
// entry names an element in the message listing its keys.
var listsOfObjects = []struct {
	key, entry string
	typ        reflect.Type
}{
	{"policies.bundles", "a bundle", reflect.TypeFor[Bundle]()},
	{"gitStatus.hosts", "a host", reflect.TypeFor[GitHost]()},
	{"gitStatus.workloadAnnotations", "a workloadAnnotations rule", reflect.TypeFor[WorkloadAnnotationRule]()},
	{"autoresize.namespaces", "an autoresize namespace", reflect.TypeFor[AutoresizeNamespace]()},
	{"autoresize.hosts", "a host", reflect.TypeFor[GitHost]()},
	{"clusters", "a cluster", reflect.TypeFor[Cluster]()},
}

// Keys returns every configuration key, in the order of Config's fields.
func Keys() []Key {
	out := make([]Key, len(keys))
	for i, k := range keys {
		out[i] = Key{Name: k.name, Flag: k.flag}
		if k.flag != "" {
			out[i].Env = envName(k.name)
		}
	}
	return out
}

// envName is the environment variable a key would have.
func envName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// BindFlags registers the flags of every key on fs, with the defaults of Default.
func BindFlags(fs *pflag.FlagSet) {
	d := Default()
	fs.String("kubeconfig", d.Kubeconfig, "path of a kubeconfig file; empty uses the in-cluster configuration")
	fs.StringSlice("namespaces", d.Namespaces, "namespaces to watch, comma-separated; empty watches all namespaces")
	fs.String("label-selector", d.LabelSelector, "label selector of the StatefulSets to manage; empty selects all")
	fs.String("update-strategy", string(d.UpdateStrategy), "how existing claims follow a changed template unless annotated: "+strings.Join(updateStrategies, " or "))
	fs.Int("max-concurrent-patches", d.MaxConcurrentPatches, "claims of one StatefulSet patched before waiting for them to become compatible (at least 1)")
	fs.Bool("restart-for-expansion", d.RestartForExpansion, "evict, one at a time, the Pods whose claims wait for a file system resize on remount, unless a StatefulSet's annotation says otherwise")
	fs.Bool("policy-reports", d.PolicyReports, "write each namespace's verdicts as an OpenReports Report (reports.openreports.io), where its CRDs are installed")
	fs.Int("max-claims-per-statefulset", d.MaxClaimsPerStatefulSet, "most claims (templates × replicas) of one StatefulSet; one with more is Stalled (at least 1)")
	fs.Int("workers", d.Workers, "StatefulSets reconciled at once (at least 1)")
	fs.Float32("kube-api-qps", d.KubeAPIQPS, "client-side limit of requests per second to the API server: 0 none when it has API Priority and Fairness, else 50; negative none")
	fs.Int("kube-api-burst", d.KubeAPIBurst, "burst of requests to the API server above a kube-api-qps limit")
	fs.String("metrics-addr", d.MetricsAddr, `host:port of the metrics endpoint; "0" disables it`)
	fs.String("health-addr", d.HealthAddr, `host:port of the /healthz and /readyz probes; "0" disables them`)
	fs.String("pprof-addr", d.PprofAddr, `host:port of Go's /debug/pprof profiles; "0" (the default) disables them`)
	fs.Bool("leader-election", d.LeaderElection.Enabled, "elect one active replica through a Lease")
	fs.String("leader-election-namespace", d.LeaderElection.Namespace, "namespace of the leader election Lease; inside a Pod the default is the Pod's namespace")
	fs.String("leader-election-id", d.LeaderElection.ID, "name of the leader election Lease")
	fs.String("journal-key-namespace", d.JournalKey.Namespace, "namespace of the Secret whose key seals the crash journal; inside a Pod the default is the Pod's namespace")
	fs.String("journal-key-secret-name", d.JournalKey.SecretName, "name of the Secret whose key seals the crash journal (created when absent)")
	fs.String("log-level", d.Log.Level, "lowest log level written: "+strings.Join(logLevels, ", "))
	fs.String("log-format", d.Log.Format, "log format: "+strings.Join(logFormats, " or "))
	fs.StringSlice("policy-dir", d.Policies.Dirs, "directory or file of .rego policies and .json/.yaml data read besides the shipped policies; repeatable or comma-separated")
	fs.Duration("policy-poll-interval", d.Policies.PollInterval, "how often the --policy-dir paths are re-read")
	fs.Duration("policy-timeout", d.Policies.Timeout, "longest evaluation of the policies for one change, at most "+MaxPolicyTimeout.String()+"; a timeout denies the change")
	fs.Int64("policy-value-limit-bytes", d.Policies.ValueLimitBytes, "largest string or collection a policy builtin such as concat or sprintf may build; 0 means 16 MiB")
	fs.Int64("policy-memory-budget-bytes", d.Policies.MemoryBudgetBytes, "heap the policy evaluations running at once may grow by, together, before they are stopped (and deny); 0 means 128 MiB")
	fs.StringSlice("policy-decision-log-mask", d.Policies.DecisionLogMask, "JSON pointer into decision-log events removed before they are sent, e.g. /input/source/repository; repeatable or comma-separated")
	fs.Bool("policy-allow-network-builtins", d.Policies.AllowNetworkBuiltins, "let policies call builtins that reach the network, such as http.send")
	fs.Bool("policy-configmaps", d.Policies.ConfigMaps, "read policies from the ConfigMaps labelled claimwarden.dev/policy=true")
	fs.String("policy-configmap-namespace", d.Policies.ConfigMapNamespace, "namespace of the policy ConfigMaps; inside a Pod the default is the Pod's namespace")
	fs.String("git-status-context-prefix", d.GitStatus.ContextPrefix, "start of the commit status contexts, <prefix>/<namespace>/<statefulset>; e.g. claimwarden/prod-eu to tell clusters apart")
	fs.String("git-status-target-url", d.GitStatus.TargetURL, "http(s) link posted with every commit status; empty posts none")
	fs.String("git-status-flux-events-addr", d.GitStatus.FluxEventsAddr, "event receiver of Flux's notification-controller; rollout outcomes are also sent there")
	fs.Bool("flux", d.Flux.Enabled, "watch Flux Kustomizations and converge StatefulSets whose volumeClaimTemplates Flux cannot apply (needs the Flux CRDs)")
	fs.StringSlice("flux-namespaces", d.Flux.Namespaces, "namespaces of the Kustomizations to watch, comma-separated; empty watches all")
	fs.String("flux-artifact-cache-dir", d.Flux.ArtifactCacheDir, "directory for downloaded source artifacts")
	fs.Int64("flux-max-artifact-size", d.Flux.MaxArtifactSize, "largest source artifact downloaded, in bytes")
	fs.Int64("flux-max-cache-size", d.Flux.MaxCacheSize, "bytes the artifact cache directory holds at most, downloads in progress included")
	fs.Int64("flux-max-build-bytes", d.Flux.MaxBuildBytes, "bytes of YAML one Kustomization build reads at most (aliases expanded)")
	fs.Int("flux-max-build-nodes", d.Flux.MaxBuildNodes, "YAML nodes one Kustomization build reads at most")
	fs.Bool("flux-helm-releases", d.Flux.HelmReleases, "watch Flux HelmReleases and converge StatefulSets whose volumeClaimTemplates a Helm upgrade cannot change (needs the helm-controller CRD)")
	fs.Int64("flux-max-release-bytes", d.Flux.MaxReleaseBytes, "bytes of one Helm release record, unpacked, read at most")
	fs.String("flux-default-service-account", d.Flux.DefaultServiceAccount, "the Flux controllers' --default-service-account: writes for a Kustomization or HelmRelease without spec.serviceAccountName are authorised as this service account of its namespace")
	fs.Bool("flux-no-cross-namespace-refs", d.Flux.NoCrossNamespaceRefs, "the Flux controllers' --no-cross-namespace-refs: sources and charts of other namespaces are not read")
	fs.Bool("argocd", d.ArgoCD.Enabled, "watch Argo CD Applications and converge StatefulSets whose volumeClaimTemplates Argo CD cannot sync (needs the Argo CD CRDs and API)")
	fs.StringSlice("argocd-namespaces", d.ArgoCD.Namespaces, "namespaces of the Applications to watch, comma-separated; empty watches all")
	fs.String("argocd-server", d.ArgoCD.Server, "argocd-server base URL, whose API gives the desired StatefulSets and starts syncs")
	fs.String("argocd-token-secret-namespace", d.ArgoCD.TokenSecretRef.Namespace, "namespace of the Secret holding the Argo CD API token; inside a Pod the default is the Pod's namespace")
	fs.String("argocd-token-secret-name", d.ArgoCD.TokenSecretRef.Name, "name of the Secret holding the Argo CD API token")
	fs.String("argocd-token-secret-key", d.ArgoCD.TokenSecretRef.Key, "key of the Argo CD API token in that Secret")
	fs.Bool("argocd-insecure", d.ArgoCD.Insecure, "skip the verification of argocd-server's certificate")
	fs.String("argocd-ca-file", d.ArgoCD.CAFile, "PEM file of CAs trusted for argocd-server besides the system's")
	fs.Bool("argocd-plaintext", d.ArgoCD.Plaintext, "allow a plain http --argocd-server (the token travels unencrypted)")
	fs.Bool("argocd-sync-manual-apps", d.ArgoCD.SyncManualApps, "also sync Applications without automated sync after converging their StatefulSet; otherwise they are only refreshed")
	fs.String("argocd-control-plane-namespace", d.ArgoCD.ControlPlaneNamespace, "Argo CD's namespace, where its AppProjects and argocd-cm are")
	fs.Bool("helm", d.Helm.Enabled, "watch the release records of plain Helm (no GitOps tool) in helm-namespaces and converge StatefulSets whose volumeClaimTemplates a helm upgrade could not change")
	fs.StringSlice("helm-namespaces", d.Helm.Namespaces, "release namespaces to watch, comma-separated; required with --helm")
	fs.Int64("helm-max-release-bytes", d.Helm.MaxReleaseBytes, "bytes of one Helm release record, unpacked, read at most")
	fs.String("autoresize-prometheus-url", d.Autoresize.Prometheus.URL, "Prometheus HTTP API the volumes' usage is read from, for autoresize")
	fs.String("autoresize-prometheus-bearer-token-file", d.Autoresize.Prometheus.BearerTokenFile, "file holding the bearer token sent to the Prometheus API, re-read on each request")
	fs.String("autoresize-prometheus-ca-file", d.Autoresize.Prometheus.CAFile, "PEM file of CAs trusted for an https Prometheus API besides the system's")
	fs.String("autoresize-prometheus-series-selector", d.Autoresize.Prometheus.SeriesSelector, "PromQL label matchers, comma-separated, the kubelet's volume statistics series must match to be read")
	fs.String("autoresize-prometheus-cluster-label", d.Autoresize.Prometheus.ClusterLabel, "label naming the cluster a series was scraped in, on a Prometheus API holding several clusters' (required with clusters listed)")
	fs.String("autoresize-prometheus-cluster-label-value", d.Autoresize.Prometheus.ClusterLabelValue, "the cluster label's value on the series of the cluster claimwarden runs in")
	fs.Duration("autoresize-interval", d.Autoresize.Interval, "how often autoresize reads usage and asks the policies")
	fs.Duration("autoresize-window", d.Autoresize.Window, "how far back autoresize measures the volumes' growth")
	fs.Duration("autoresize-render-timeout", d.Autoresize.Render.Timeout, "wall-clock time of one render of a tenant's chart, in its child process")
	fs.Duration("autoresize-render-cpu", d.Autoresize.Render.CPU, "CPU time of one render of a tenant's chart")
	fs.Int64("autoresize-render-memory-bytes", d.Autoresize.Render.MemoryBytes, "heap one render of a tenant's chart may use")
	fs.Int("autoresize-render-concurrency", d.Autoresize.Render.Concurrency, "renders of tenants' charts running at once")
	fs.Int("autoresize-concurrency", d.Autoresize.Concurrency, "how many StatefulSets autoresize checks at once")
	fs.Duration("autoresize-check-timeout", d.Autoresize.CheckTimeout, "the deadline of autoresize's check of one StatefulSet")
	fs.String("sharding-key", d.Sharding.Key, "this instance's shard: it handles the tool objects labelled "+ShardLabel+"=<key>; empty handles those without the label")
	fs.StringSlice("sharding-shards", d.Sharding.Shards, "on the instance without a sharding key: the keys the other instances handle, comma-separated; a tool object with another key is reported")
}

// namespaceFile is where Kubernetes mounts the Pod's namespace; tests point it elsewhere.
var namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Load reads the configuration file at path (none when empty), the CLAIMWARDEN_*
// variables of environ (as os.Environ returns it) and the flags of flags that were
// set (flags may be nil), layers them over Default, and validates the result.
// Secret references in gitStatus.hosts, autoresize.hosts and clusters that
// name no namespace or key get the defaults, which Default cannot hold for
// list entries.
// Environment variables set to the empty string count as unset.
func Load(flags *pflag.FlagSet, path string, environ []string) (Config, error) {
	v := viper.New()
	if path != "" {
		v.SetConfigFile(path)
		// The file is YAML whatever its extension (a ConfigMap key may have none).
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return Config{}, fmt.Errorf("reading config file %s: %w", path, err)
		}
		if err := checkFileKeys(v.AllKeys()); err != nil {
			return Config{}, fmt.Errorf("config file %s: %w", path, err)
		}
	}

	env, err := envSettings(environ)
	if err != nil {
		return Config{}, err
	}
	// Viper reads the environment only from the process; merging the variables
	// over the file gives them the same precedence without touching os.Environ.
	if err := v.MergeConfigMap(env); err != nil {
		return Config{}, err
	}

	if flags != nil {
		for _, k := range keys {
			if k.flag == "" {
				continue
			}
			if f := flags.Lookup(k.flag); f != nil {
				// Viper takes a bound flag's value only when it was set on the command line.
				if err := v.BindPFlag(k.name, f); err != nil {
					return Config{}, err
				}
			}
		}
	}

	cfg := Default()
	// Metadata collects the keys decoding left unused, with their full path
	// ("policies.bundles[0].urll"). checkFileKeys has already refused every
	// unknown key viper can see, which excludes keys inside list entries:
	// what remains unused is a typo inside a bundle or a host.
	var md mapstructure.Metadata
	err = v.Unmarshal(&cfg,
		viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
			durationHook,
			// Viper's default, which splits "a,b" from a variable into a list.
			mapstructure.StringToWeakSliceHookFunc(","),
		)),
		func(c *mapstructure.DecoderConfig) { c.Metadata = &md },
	)
	if err != nil {
		return Config{}, decodeError(err)
	}
	if len(md.Unused) > 0 {
		return Config{}, fmt.Errorf("config file %s: %w", path, unknownEntryKeys(md.Unused))
	}
	cfg.GitStatus.fillDefaults(podNamespace())
	fillHostDefaults(cfg.Autoresize.Hosts, podNamespace())
	fillClusterDefaults(cfg.Clusters, podNamespace(), cfg.ArgoCD.ControlPlaneNamespace)

	// Unmarshal decodes viper's flattened view of the file, in which a name
	// holding a dot ("example.com/tier") is split into nested maps and null
	// values and empty maps are dropped. The free-form maps are handed on to
	// the policies, where null unsets a parameter, so they are taken as read.
	for _, ff := range []struct {
		key string
		dst *map[string]any
	}{{"policies.params", &cfg.Policies.Params}, {"policies.decisionLogs", &cfg.Policies.DecisionLogs}} {
		if m, ok := v.Get(ff.key).(map[string]any); ok && len(m) > 0 {
			*ff.dst = m
		}
	}
	return cfg, cfg.Validate()
}

// durationHook decodes time.Duration values. Strings are Go durations ("10s",
// "1m30s"), as flags and variables spell them. Numbers other than 0 are
// refused: mapstructure would read `timeout: 5` as 5ns where a reader of the
// file expects seconds.
func durationHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeFor[time.Duration]() {
		return data, nil
	}
	value := reflect.ValueOf(data)
	switch from.Kind() {
	case reflect.String:
		d, err := time.ParseDuration(value.String())
		if err != nil {
			return nil, fmt.Errorf("%q is not a duration such as 500ms, 10s or 1m30s", value.String())
		}
		return d, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if value.IsZero() {
			return time.Duration(0), nil
		}
		return nil, fmt.Errorf("%q has no unit: write a duration such as 500ms, 10s or 1m30s", fmt.Sprint(data))
	}
	return data, nil
}

// unknownEntryKeys reports the unknown keys decoding found inside the
// entries of listsOfObjects, one line per list, with the keys an entry has.
func unknownEntryKeys(unused []string) error {
	var errs []error
	report := func(found []string, known string) {
		if len(found) == 0 {
			return
		}
		quoted := make([]string, len(found))
		for i, k := range found {
			quoted[i] = strconv.Quote(k)
		}
		slices.Sort(quoted)
		errs = append(errs, fmt.Errorf("%s %s%s", plural(len(found), "unknown key"), strings.Join(quoted, ", "), known))
	}
	rest := unused
	for _, l := range listsOfObjects {
		// Decoding names a path by the struct tags ("gitStatus.hosts[0]"),
		// the keys inside the entries as written (lower case).
		in, out := partition(rest, func(k string) bool { return strings.HasPrefix(k, l.key+"[") })
		report(in, fmt.Sprintf(" (known keys of %s: %s)", l.entry, strings.Join(entryKeys(l.typ, ""), ", ")))
		rest = out
	}
	// No path should be left, but a key is never silently dropped.
	report(rest, "")
	return errors.Join(errs...)
}

// partition splits s into the elements keep holds for and the others.
func partition(s []string, keep func(string) bool) (in, out []string) {
	for _, e := range s {
		if keep(e) {
			in = append(in, e)
		} else {
			out = append(out, e)
		}
	}
	return in, out
}

// entryKeys lists the keys of a struct type as the file spells them, nested
// structs (pointed to or not) as dotted paths.
func entryKeys(typ reflect.Type, prefix string) []string {
	var out []string
	for f := range typ.Fields() {
		name := prefix + f.Tag.Get("mapstructure")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			out = append(out, entryKeys(ft, name+".")...)
			continue
		}
		out = append(out, name)
	}
	return out
}

// checkFileKeys rejects keys of the file that are not configuration keys.
// Viper lower-cases keys, so the comparison (and the message) is in lower case.
// Viper lists a nested map's leaves, not the map: below a free-form key any
// leaf is known. Viper does not descend into lists, so the keys of bundle
// and host entries are checked when decoding (see Load).
func checkFileKeys(fileKeys []string) error {
	known := func(fk string) bool {
		for _, ff := range freeForm {
			if strings.HasPrefix(fk, strings.ToLower(ff)+".") {
				return true
			}
		}
		for _, k := range keys {
			name := strings.ToLower(k.name)
			// A parent such as "log" appears when it holds no map; decoding then
			// reports the wrong type, which says more than "unknown key" would.
			if fk == name || strings.HasPrefix(name, fk+".") {
				return true
			}
		}
		return false
	}
	var unknown []string
	for _, fk := range fileKeys {
		if !known(fk) {
			unknown = append(unknown, strconv.Quote(fk))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return fmt.Errorf("%s %s (known keys: %s)", plural(len(unknown), "unknown key"), strings.Join(unknown, ", "), strings.Join(names, ", "))
}

// envSettings turns the CLAIMWARDEN_* variables of environ into a nested map of
// file keys, rejecting variables that name no key.
func envSettings(environ []string) (map[string]any, error) {
	byEnv := map[string]string{}
	// fileOnly maps the variable a file-only key would have to the key, to
	// say why the variable is refused.
	fileOnly := map[string]string{}
	for _, k := range Keys() {
		if k.FileOnly() {
			fileOnly[envName(k.Name)] = k.Name
			continue
		}
		byEnv[k.Env] = k.Name
	}
	settings := map[string]any{}
	var unknown, inFileOnly []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		if key, ok := fileOnly[name]; ok {
			inFileOnly = append(inFileOnly, fmt.Sprintf("environment variable %s: %s can be set in the configuration file only", name, key))
			continue
		}
		key, ok := byEnv[name]
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		if value == "" {
			continue
		}
		// Nest "log.level" as {"log": {"level": value}}, the shape of the file.
		parts := strings.Split(key, ".")
		m := settings
		for _, p := range parts[:len(parts)-1] {
			child, ok := m[p].(map[string]any)
			if !ok {
				child = map[string]any{}
				m[p] = child
			}
			m = child
		}
		m[parts[len(parts)-1]] = value
	}
	var errs []error
	if len(unknown) > 0 {
		slices.Sort(unknown)
		errs = append(errs, fmt.Errorf("%s %s: no configuration key is named so", plural(len(unknown), "unknown environment variable"), strings.Join(unknown, ", ")))
	}
	slices.Sort(inFileOnly)
	for _, msg := range inFileOnly {
		errs = append(errs, errors.New(msg))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return settings, nil
}

// plural appends an "s" to noun unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// decodeError rewrites mapstructure's errors, one line per key, as
// `key: "value" is not a valid T`.
func decodeError(err error) error {
	var lines []string
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			for _, child := range e.Unwrap() {
				walk(child)
			}
		case *mapstructure.DecodeError:
			var pe *mapstructure.ParseError
			var ue *mapstructure.UnconvertibleTypeError
			switch inner := e.Unwrap(); {
			case errors.As(inner, &pe):
				lines = append(lines, fmt.Sprintf("%s: %q is not a valid %s", e.Name(), fmt.Sprint(pe.Value), pe.Expected.Type()))
			case errors.As(inner, &ue):
				lines = append(lines, fmt.Sprintf("%s: %q is not a valid %s", e.Name(), fmt.Sprint(ue.Value), ue.Expected.Type()))
			default:
				lines = append(lines, fmt.Sprintf("%s: %v", e.Name(), inner))
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		default:
			lines = append(lines, err.Error())
		}
	}
	walk(err)
	return errors.New(strings.Join(lines, "\n"))
}

// podNamespace is the namespace of the Pod the controller runs in, or
// DefaultLeaderElectionNamespace outside a Pod.
func podNamespace() string {
	if b, err := os.ReadFile(namespaceFile); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	return DefaultLeaderElectionNamespace
}

// Selector parses LabelSelector; the empty selector selects everything.
func (c Config) Selector() (labels.Selector, error) {
	return labels.Parse(c.LabelSelector)
}

// Validate reports every invalid value, one line per key, naming the key and the value.
func (c Config) Validate() error {
	var errs []error
	bad := func(key string, value any, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %q %s", key, fmt.Sprint(value), fmt.Sprintf(format, args...)))
	}

	for _, ns := range c.Namespaces {
		if problems := validation.IsDNS1123Label(ns); len(problems) > 0 {
			bad("namespaces", ns, "is not a namespace name: %s", strings.Join(problems, "; "))
		}
	}
	if _, err := c.Selector(); err != nil {
		bad("labelSelector", c.LabelSelector, "is not a label selector: %v", err)
	}
	if !slices.Contains(updateStrategies, string(c.UpdateStrategy)) {
		bad("updateStrategy", c.UpdateStrategy, "is not one of %s", strings.Join(updateStrategies, ", "))
	}
	if c.MaxConcurrentPatches < 1 {
		bad("maxConcurrentPatches", c.MaxConcurrentPatches, "is less than 1")
	}
	if c.MaxClaimsPerStatefulSet < 1 {
		bad("maxClaimsPerStatefulSet", c.MaxClaimsPerStatefulSet, "is less than 1")
	}
	if c.Workers < 1 {
		bad("workers", c.Workers, "is less than 1")
	}
	if c.KubeAPIBurst < 1 {
		bad("kubeAPIBurst", c.KubeAPIBurst, "is less than 1")
	}
	if err := checkAddr(c.MetricsAddr); err != nil {
		bad("metricsAddr", c.MetricsAddr, "%v", err)
	}
	if err := checkAddr(c.HealthAddr); err != nil {
		bad("healthAddr", c.HealthAddr, "%v", err)
	}
	if err := checkAddr(c.PprofAddr); err != nil {
		bad("pprofAddr", c.PprofAddr, "%v", err)
	}
	// Namespace and ID name Kubernetes objects; checking them here fails at start
	// rather than when the first Lease is written.
	if problems := validation.IsDNS1123Label(c.LeaderElection.Namespace); len(problems) > 0 {
		bad("leaderElection.namespace", c.LeaderElection.Namespace, "is not a namespace name: %s", strings.Join(problems, "; "))
	}
	if problems := validation.IsDNS1123Subdomain(c.LeaseID()); len(problems) > 0 {
		bad("leaderElection.id", c.LeaseID(), "is not a Lease name: %s", strings.Join(problems, "; "))
	}
	if problems := validation.IsDNS1123Label(c.JournalKey.Namespace); len(problems) > 0 {
		bad("journalKey.namespace", c.JournalKey.Namespace, "is not a namespace name: %s", strings.Join(problems, "; "))
	}
	if problems := validation.IsDNS1123Subdomain(c.JournalKey.SecretName); len(problems) > 0 {
		bad("journalKey.secretName", c.JournalKey.SecretName, "is not a Secret name: %s", strings.Join(problems, "; "))
	}
	if !slices.Contains(logLevels, c.Log.Level) {
		bad("log.level", c.Log.Level, "is not one of %s", strings.Join(logLevels, ", "))
	}
	if !slices.Contains(logFormats, c.Log.Format) {
		bad("log.format", c.Log.Format, "is not one of %s", strings.Join(logFormats, ", "))
	}
	c.Policies.validate(bad)
	c.GitStatus.validate(bad)
	c.Flux.validate(bad)
	c.ArgoCD.validate(bad)
	c.Helm.validate(bad)
	c.Autoresize.validate(bad)
	validateClusters(c.Clusters, bad)
	c.validateClusterUsage(bad)
	c.Sharding.validate(bad)
	return errors.Join(errs...)
}

// checkAddr accepts "0" (disabled) or host:port with a numeric port.
func checkAddr(addr string) error {
	if addr == "0" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf(`is not "0" or host:port: %w`, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("has no port number between 0 and 65535")
	}
	return nil
}
