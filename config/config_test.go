package config

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// testPEM is a PEM block: Validate checks that key and CA files hold one,
// OPA parses the key when it verifies a signature.
const testPEM = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n"

// writeConfig writes a configuration file and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// parsedFlags returns the flags of BindFlags after parsing args.
func parsedFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestDefaultIsValid(t *testing.T) {
	d := Default()
	if err := d.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	want := Config{
		UpdateStrategy:          v1alpha1.InPlace,
		MaxConcurrentPatches:    1,
		MaxClaimsPerStatefulSet: 1000,
		MetricsAddr:             ":8080",
		Workers:                 16,
		KubeAPIQPS:              0,
		KubeAPIBurst:            300,
		HealthAddr:              ":8081",
		PprofAddr:               "0",
		LeaderElection:          LeaderElection{Enabled: true, Namespace: podNamespace(), ID: "claimwarden.claimwarden.dev"},
		JournalKey:              JournalKey{Namespace: podNamespace(), SecretName: "claimwarden-journal-key"},
		Log:                     Log{Level: "info", Format: "json"},
		Policies: Policies{
			PollInterval:       10 * time.Second,
			Timeout:            time.Second,
			ConfigMaps:         true,
			ConfigMapNamespace: podNamespace(),
		},
		GitStatus: GitStatus{ContextPrefix: "claimwarden"},
		Flux:      Flux{ArtifactCacheDir: filepath.Join(os.TempDir(), "claimwarden-artifacts"), MaxArtifactSize: 100 << 20, MaxCacheSize: 768 << 20, MaxBuildBytes: 8 << 20, MaxBuildNodes: 600000, MaxReleaseBytes: 16 << 20},
		ArgoCD: ArgoCD{
			Server:                "https://argocd-server.argocd.svc",
			TokenSecretRef:        SecretKeyRef{Namespace: podNamespace(), Name: "claimwarden-argocd", Key: "token"},
			ControlPlaneNamespace: "argocd",
		},
		Helm: Helm{MaxReleaseBytes: 16 << 20},
		Autoresize: Autoresize{Interval: 5 * time.Minute, Window: 6 * time.Hour, Prometheus: Prometheus{SeriesSelector: `job="kubelet", metrics_path="/metrics"`, ClusterLabelValue: "in-cluster"},
			Concurrency: 4, CheckTimeout: 2 * time.Minute,
			Render: AutoresizeRender{Timeout: 30 * time.Second, CPU: 20 * time.Second, MemoryBytes: 128 << 20, Concurrency: 2}},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("Default() = %+v, want %+v", d, want)
	}
}

func TestPodNamespace(t *testing.T) {
	old := namespaceFile
	t.Cleanup(func() { namespaceFile = old })

	namespaceFile = filepath.Join(t.TempDir(), "missing")
	if got := podNamespace(); got != DefaultLeaderElectionNamespace {
		t.Errorf("outside a Pod: podNamespace() = %q, want %q", got, DefaultLeaderElectionNamespace)
	}

	namespaceFile = writeConfig(t, "ops\n")
	if got := podNamespace(); got != "ops" {
		t.Errorf("in a Pod: podNamespace() = %q, want ops", got)
	}
	if got := Default().LeaderElection.Namespace; got != "ops" {
		t.Errorf("in a Pod: Default().LeaderElection.Namespace = %q, want ops", got)
	}
	if got := Default().Policies.ConfigMapNamespace; got != "ops" {
		t.Errorf("in a Pod: Default().Policies.ConfigMapNamespace = %q, want ops", got)
	}
}

// TestKeysCoverConfig keeps Keys, BindFlags and the struct tags from drifting
// apart, and keeps to the file exactly the keys a flag cannot spell.
func TestKeysCoverConfig(t *testing.T) {
	var tags []string
	// noFlatSpelling are the keys holding a map or a list of objects, which
	// neither a flag nor a variable can express.
	noFlatSpelling := map[string]bool{}
	walkKeys(reflect.TypeFor[Config](), "", func(name string, typ reflect.Type) {
		tags = append(tags, name)
		if typ.Kind() == reflect.Map || (typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Struct) {
			noFlatSpelling[name] = true
		}
	})

	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	BindFlags(fs)
	flags := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })

	var names []string
	for _, k := range Keys() {
		names = append(names, k.Name)
		if k.FileOnly() != noFlatSpelling[k.Name] {
			t.Errorf("key %s: FileOnly() = %t, want %t", k.Name, k.FileOnly(), noFlatSpelling[k.Name])
		}
		if k.FileOnly() {
			if k.Env != "" {
				t.Errorf("file-only key %s has the variable %s", k.Name, k.Env)
			}
			continue
		}
		if !flags[k.Flag] {
			t.Errorf("key %s: BindFlags registers no flag --%s", k.Name, k.Flag)
		}
		delete(flags, k.Flag)
	}
	if !reflect.DeepEqual(names, tags) {
		t.Errorf("Keys() names = %v, want the struct tags %v", names, tags)
	}
	if len(flags) > 0 {
		t.Errorf("BindFlags registers flags no key lists: %v", flags)
	}
}

func TestKeysEnv(t *testing.T) {
	want := map[string]string{
		"leaderElection.enabled":        "CLAIMWARDEN_LEADERELECTION_ENABLED",
		"maxConcurrentPatches":          "CLAIMWARDEN_MAXCONCURRENTPATCHES",
		"restartForExpansion":           "CLAIMWARDEN_RESTARTFOREXPANSION",
		"log.format":                    "CLAIMWARDEN_LOG_FORMAT",
		"policies.dirs":                 "CLAIMWARDEN_POLICIES_DIRS",
		"policies.pollInterval":         "CLAIMWARDEN_POLICIES_POLLINTERVAL",
		"policies.bundles":              "",
		"policies.params":               "",
		"policies.decisionLogs":         "",
		"gitStatus.contextPrefix":       "CLAIMWARDEN_GITSTATUS_CONTEXTPREFIX",
		"gitStatus.targetURL":           "CLAIMWARDEN_GITSTATUS_TARGETURL",
		"gitStatus.fluxEventsAddr":      "CLAIMWARDEN_GITSTATUS_FLUXEVENTSADDR",
		"gitStatus.hosts":               "",
		"gitStatus.workloadAnnotations": "",
		"argocd.tokenSecretRef.name":    "CLAIMWARDEN_ARGOCD_TOKENSECRETREF_NAME",
		"argocd.syncManualApps":         "CLAIMWARDEN_ARGOCD_SYNCMANUALAPPS",
	}
	for _, k := range Keys() {
		if w, ok := want[k.Name]; ok && k.Env != w {
			t.Errorf("key %s: Env = %q, want %q", k.Name, k.Env, w)
		}
		delete(want, k.Name)
	}
	if len(want) > 0 {
		t.Errorf("Keys() lacks %v", want)
	}
}

func TestLoad(t *testing.T) {
	const file = `
namespaces: [apps, data]
labelSelector: tier=db
updateStrategy: OnClaimDelete
maxConcurrentPatches: 2
restartForExpansion: true
leaderElection:
  enabled: false
  id: from-file
log:
  level: debug
`
	tests := []struct {
		name  string
		file  string // empty: no file
		env   []string
		flags []string
		check func(t *testing.T, c Config)
	}{{
		name: "defaults",
		check: func(t *testing.T, c Config) {
			if diff := cmp.Diff(Default(), c, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Load differs from Default() (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "file over default",
		file: file,
		check: func(t *testing.T, c Config) {
			want := Default()
			want.Namespaces = []string{"apps", "data"}
			want.LabelSelector = "tier=db"
			want.UpdateStrategy = v1alpha1.OnClaimDelete
			want.MaxConcurrentPatches = 2
			want.RestartForExpansion = true
			want.LeaderElection.Enabled = false
			want.LeaderElection.ID = "from-file"
			want.Log.Level = "debug"
			// An unset list flag's default reads as an empty list, not nil.
			if diff := cmp.Diff(want, c, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
	}, {
		name: "env over file",
		file: file,
		env: []string{
			"CLAIMWARDEN_MAXCONCURRENTPATCHES=3",
			"CLAIMWARDEN_LEADERELECTION_ENABLED=true",
			"CLAIMWARDEN_NAMESPACES=web,cache",
			"CLAIMWARDEN_LOG_FORMAT=console",
			"PATH=/usr/bin", // not ours: ignored
		},
		check: func(t *testing.T, c Config) {
			if c.MaxConcurrentPatches != 3 || !c.LeaderElection.Enabled || c.Log.Format != "console" {
				t.Errorf("env did not win over file: %+v", c)
			}
			if !reflect.DeepEqual(c.Namespaces, []string{"web", "cache"}) {
				t.Errorf("Namespaces = %q, want [web cache]", c.Namespaces)
			}
			if c.LeaderElection.ID != "from-file" || c.Log.Level != "debug" {
				t.Errorf("keys the env does not set lost their file values: %+v", c)
			}
		},
	}, {
		name:  "flag over env over file",
		file:  file,
		env:   []string{"CLAIMWARDEN_MAXCONCURRENTPATCHES=3", "CLAIMWARDEN_UPDATESTRATEGY=InPlace"},
		flags: []string{"--max-concurrent-patches=4", "--leader-election=true", "--namespaces=a", "--namespaces=b", "--restart-for-expansion=false"},
		check: func(t *testing.T, c Config) {
			if c.MaxConcurrentPatches != 4 || !c.LeaderElection.Enabled || c.RestartForExpansion {
				t.Errorf("flags did not win: %+v", c)
			}
			if !reflect.DeepEqual(c.Namespaces, []string{"a", "b"}) {
				t.Errorf("Namespaces = %q, want [a b]", c.Namespaces)
			}
			if c.UpdateStrategy != v1alpha1.InPlace {
				t.Errorf("UpdateStrategy = %s: env (not set by a flag) lost to the file", c.UpdateStrategy)
			}
			if c.LabelSelector != "tier=db" {
				t.Errorf("LabelSelector = %q: unset flag's default overrode the file", c.LabelSelector)
			}
		},
	}, {
		name:  "flag sets a key to empty",
		file:  file,
		flags: []string{"--namespaces=", "--label-selector="},
		check: func(t *testing.T, c Config) {
			if len(c.Namespaces) != 0 || c.LabelSelector != "" {
				t.Errorf("Namespaces = %q, LabelSelector = %q, want both empty", c.Namespaces, c.LabelSelector)
			}
		},
	}, {
		name: "empty env variable counts as unset",
		file: file,
		env:  []string{"CLAIMWARDEN_LEADERELECTION_ENABLED=", "CLAIMWARDEN_MAXCONCURRENTPATCHES="},
		check: func(t *testing.T, c Config) {
			if c.LeaderElection.Enabled || c.MaxConcurrentPatches != 2 {
				t.Errorf("empty variables overrode the file: %+v", c)
			}
		},
	}, {
		name: "keys are case-insensitive in the file",
		file: "LabelSelector: app=x\nLOG:\n  Level: error\n",
		check: func(t *testing.T, c Config) {
			if c.LabelSelector != "app=x" || c.Log.Level != "error" {
				t.Errorf("got %+v", c)
			}
		},
	}, {
		name:  "metrics disabled",
		flags: []string{"--metrics-addr=0", "--health-addr=127.0.0.1:9000"},
		check: func(t *testing.T, c Config) {
			if c.MetricsAddr != "0" || c.HealthAddr != "127.0.0.1:9000" {
				t.Errorf("got %+v", c)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeConfig(t, tt.file)
			}
			c, err := Load(parsedFlags(t, tt.flags...), path, tt.env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadPolicies(t *testing.T) {
	const file = `
policies:
  dirs: [/file/a]
  pollInterval: 30s
  timeout: 2s
  configMapNamespace: from-file
`
	tests := []struct {
		name  string
		file  string
		env   []string
		flags []string
		want  func(p *Policies) // changes Default().Policies into the expected value
	}{{
		name: "defaults",
		want: func(p *Policies) {},
	}, {
		name: "file over default",
		file: file,
		want: func(p *Policies) {
			p.Dirs = []string{"/file/a"}
			p.PollInterval = 30 * time.Second
			p.Timeout = 2 * time.Second
			p.ConfigMapNamespace = "from-file"
		},
	}, {
		name: "env over file",
		file: file,
		env:  []string{"CLAIMWARDEN_POLICIES_DIRS=/env/a,/env/b", "CLAIMWARDEN_POLICIES_TIMEOUT=1500ms", "CLAIMWARDEN_POLICIES_CONFIGMAPS=false"},
		want: func(p *Policies) {
			p.Dirs = []string{"/env/a", "/env/b"}
			p.PollInterval = 30 * time.Second
			p.Timeout = 1500 * time.Millisecond
			p.ConfigMaps = false
			p.ConfigMapNamespace = "from-file"
		},
	}, {
		name:  "flag over env over file",
		file:  file,
		env:   []string{"CLAIMWARDEN_POLICIES_DIRS=/env/a", "CLAIMWARDEN_POLICIES_TIMEOUT=3s", "CLAIMWARDEN_POLICIES_POLLINTERVAL=45s"},
		flags: []string{"--policy-dir=/flag/a", "--policy-dir=/flag/b,/flag/c", "--policy-timeout=1m", "--policy-allow-network-builtins", "--policy-configmap-namespace=from-flag"},
		want: func(p *Policies) {
			p.Dirs = []string{"/flag/a", "/flag/b", "/flag/c"}
			p.PollInterval = 45 * time.Second // env, no flag
			p.Timeout = time.Minute
			p.AllowNetworkBuiltins = true
			p.ConfigMapNamespace = "from-flag"
		},
	}, {
		name:  "no ConfigMaps: their namespace is not checked",
		flags: []string{"--policy-configmaps=false", "--policy-configmap-namespace=Not_A_Namespace"},
		want: func(p *Policies) {
			p.ConfigMaps = false
			p.ConfigMapNamespace = "Not_A_Namespace"
		},
	}, {
		name: "zero duration without unit",
		file: "policies:\n  bundles:\n  - name: org\n    url: https://x/org\n    pollMin: 0\n",
		want: func(p *Policies) { p.Bundles = []Bundle{{Name: "org", URL: "https://x/org"}} },
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeConfig(t, tt.file)
			}
			c, err := Load(parsedFlags(t, tt.flags...), path, tt.env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := Default().Policies
			tt.want(&want)
			if diff := cmp.Diff(want, c.Policies, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Policies (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadFileOnlyPolicies loads every file-only key and checks that the
// free-form maps arrive as written, nested, null and dotted entries included.
func TestLoadFileOnlyPolicies(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"token": "s3cret\n", "ca.pem": testPEM, "key.pem": testPEM}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	file := strings.ReplaceAll(`
policies:
  bundles:
  - name: org
    url: https://bundles.example.com/org/claims.tar.gz
    pollMin: 30s
    pollMax: 2m
    tokenFile: DIR/token
    caCertFile: DIR/ca.pem
    publicKeyFile: DIR/key.pem
    keyID: org-2024
    algorithm: ES256
    scope: claims
    sizeLimitBytes: 1048576
    totalSizeLimitBytes: 8388608
    downloadTimeout: 20s
    trigger: manual
  - NAME: team
    Url: http://bundle-server.policies:8080/team.tar.gz
  params:
    max_step_percent: 50
    max_step_bytes: null
    disabled: [class-must-match]
    Tiers:
      gold: {max_size: 1Ti, classes: [fast, "premium"]}
    example.com/owner: storage-team
    empty: {}
  decisionLogs:
    services:
      logs:
        url: https://logs.example.com
        headers: {X-Tenant: claims}
    decision_logs:
      service: logs
      reporting: {min_delay_seconds: 5}
`, "DIR", dir)
	c, err := Load(parsedFlags(t), writeConfig(t, file), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Default().Policies
	want.Bundles = []Bundle{{
		Name:                "org",
		URL:                 "https://bundles.example.com/org/claims.tar.gz",
		PollMin:             30 * time.Second,
		PollMax:             2 * time.Minute,
		TokenFile:           filepath.Join(dir, "token"),
		CACertFile:          filepath.Join(dir, "ca.pem"),
		PublicKeyFile:       filepath.Join(dir, "key.pem"),
		KeyID:               "org-2024",
		Algorithm:           "ES256",
		Scope:               "claims",
		SizeLimitBytes:      1 << 20,
		TotalSizeLimitBytes: 8 << 20,
		DownloadTimeout:     20 * time.Second,
		Trigger:             "manual",
	}, {
		// Keys of bundle entries are case-insensitive like every other key.
		Name: "team",
		URL:  "http://bundle-server.policies:8080/team.tar.gz",
	}}
	want.Params = map[string]any{
		"max_step_percent": 50,
		"max_step_bytes":   nil,
		"disabled":         []any{"class-must-match"},
		// Parameter names are read in lower case.
		"tiers": map[string]any{
			"gold": map[string]any{"max_size": "1Ti", "classes": []any{"fast", "premium"}},
		},
		"example.com/owner": "storage-team",
		"empty":             map[string]any{},
	}
	want.DecisionLogs = map[string]any{
		"services": map[string]any{
			"logs": map[string]any{"url": "https://logs.example.com", "headers": map[string]any{"x-tenant": "claims"}},
		},
		"decision_logs": map[string]any{"service": "logs", "reporting": map[string]any{"min_delay_seconds": 5}},
	}
	if diff := cmp.Diff(want, c.Policies, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Policies (-want +got):\n%s", diff)
	}
	if _, ok := c.Policies.Params["max_step_bytes"]; !ok {
		t.Error("the null parameter max_step_bytes was dropped; in Rego null unsets a limit")
	}
}

// TestDurationFlags: pflag parses the duration flags itself, so a flag without
// a unit fails before Load, naming the flag.
func TestDurationFlags(t *testing.T) {
	for _, flag := range []string{"policy-timeout", "policy-poll-interval"} {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		BindFlags(fs)
		err := fs.Parse([]string{"--" + flag + "=10"})
		if err == nil || !strings.Contains(err.Error(), "--"+flag) {
			t.Errorf("--%s=10: error = %v, want one naming the flag", flag, err)
		}
	}
}

func TestLoadWithoutFlags(t *testing.T) {
	c, err := Load(nil, "", []string{"CLAIMWARDEN_LOG_LEVEL=error"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Log.Level != "error" || c.MaxConcurrentPatches != 1 {
		t.Errorf("got %+v", c)
	}
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   []string
		flags []string
		want  string // the whole error text, or its start when it ends with "..."
	}{{
		name: "unknown top-level key in file",
		file: "labelSelectr: app=db\n",
		want: `unknown key "labelselectr" (known keys: kubeconfig, namespaces, labelSelector, updateStrategy, maxConcurrentPatches, restartForExpansion, policyReports, maxClaimsPerStatefulSet, workers, kubeAPIQPS, kubeAPIBurst, metricsAddr, healthAddr, pprofAddr, leaderElection.enabled, leaderElection.namespace, leaderElection.id, journalKey.namespace, journalKey.secretName, log.level, log.format, ` +
			`policies.dirs, policies.pollInterval, policies.timeout, policies.valueLimitBytes, policies.memoryBudgetBytes, policies.allowNetworkBuiltins, policies.configMaps, policies.configMapNamespace, policies.bundles, policies.params, policies.decisionLogs, policies.decisionLogMask, ` +
			`gitStatus.contextPrefix, gitStatus.targetURL, gitStatus.fluxEventsAddr, gitStatus.hosts, gitStatus.workloadAnnotations, flux.enabled, flux.namespaces, flux.artifactCacheDir, flux.maxArtifactSize, flux.maxCacheSize, flux.maxBuildBytes, flux.maxBuildNodes, flux.helmReleases, flux.maxReleaseBytes, flux.defaultServiceAccount, flux.noCrossNamespaceRefs, ` +
			`argocd.enabled, argocd.namespaces, argocd.server, argocd.tokenSecretRef.namespace, argocd.tokenSecretRef.name, argocd.tokenSecretRef.key, ` +
			`argocd.insecure, argocd.caFile, argocd.plaintext, argocd.syncManualApps, argocd.controlPlaneNamespace, ` +
			`helm.enabled, helm.namespaces, helm.maxReleaseBytes, autoresize.namespaces, autoresize.prometheus.url, autoresize.prometheus.bearerTokenFile, autoresize.prometheus.caFile, autoresize.prometheus.seriesSelector, autoresize.prometheus.clusterLabel, autoresize.prometheus.clusterLabelValue, autoresize.interval, autoresize.window, autoresize.render.timeout, autoresize.render.cpu, autoresize.render.memoryBytes, autoresize.render.concurrency, autoresize.concurrency, autoresize.checkTimeout, autoresize.hosts, clusters, sharding.key, sharding.shards)`,
	}, {
		name:  "render bounds",
		flags: []string{"--autoresize-render-memory-bytes=1024", "--autoresize-render-concurrency=0"},
		want:  "autoresize.render.memoryBytes: \"1024\" is less than 32 MiB: a chart loads and renders in that at least\nautoresize.render.concurrency: \"0\" is not between 1 and 16",
	}, {
		name: "unknown policies key",
		file: "policies:\n  foo: 1\n  timeout: 2s\n",
		want: `unknown key "policies.foo" (known keys: ...`,
	}, {
		name: "unknown key inside a bundle",
		file: "policies:\n  bundles:\n  - name: org\n    urll: https://bundles.example.com/org.tar.gz\n",
		want: `unknown key "policies.bundles[0].urll" (known keys of a bundle: name, url, pollMin, pollMax, tokenFile, caCertFile, publicKeyFile, keyID, algorithm, scope, sizeLimitBytes, totalSizeLimitBytes, downloadTimeout, trigger)`,
	}, {
		name: "unknown keys inside several bundles",
		file: "policies:\n  bundles:\n  - name: a\n    url: https://x/a\n    token: s3cret\n  - name: b\n    url: https://x/b\n    pollMinimum: 1m\n",
		want: `unknown keys "policies.bundles[0].token", "policies.bundles[1].pollminimum" (known keys of a bundle: ...`,
	}, {
		name: "bundles written as a map",
		file: "policies:\n  bundles:\n    name: org\n    url: https://x/org\n",
		want: `unknown keys "policies.bundles.name", "policies.bundles.url" (known keys: ...`,
	}, {
		name: "bundle that is not a map",
		file: "policies:\n  bundles: [org]\n",
		want: `policies.bundles[0]: expected a map or struct, got "string"`,
	}, {
		name: "params that are not a map",
		file: "policies:\n  params: 50\n",
		want: `policies.params: "50" is not a valid map[string]interface {}`,
	}, {
		name: "params JSON cannot encode",
		file: "policies:\n  params:\n    max_step_percent: .inf\n",
		want: `policies.params.max_step_percent: "+Inf" cannot be encoded as JSON: json: unsupported value: +Inf`,
	}, {
		name: "duration without unit in file",
		file: "policies:\n  timeout: 5\n",
		want: `policies.timeout: "5" has no unit: write a duration such as 500ms, 10s or 1m30s`,
	}, {
		name: "fractional duration without unit in a bundle",
		file: "policies:\n  bundles:\n  - name: org\n    url: https://x/org\n    pollMin: 1.5\n",
		want: `policies.bundles[0].pollMin: "1.5" has no unit: write a duration such as 500ms, 10s or 1m30s`,
	}, {
		name: "not a duration in env",
		env:  []string{"CLAIMWARDEN_POLICIES_POLLINTERVAL=soon"},
		want: `policies.pollInterval: "soon" is not a duration such as 500ms, 10s or 1m30s`,
	}, {
		name: "invalid duration in env",
		env:  []string{"CLAIMWARDEN_POLICIES_TIMEOUT=2m"},
		want: `policies.timeout: "2m0s" is longer than 1m0s`,
	}, {
		name:  "zero duration by flag",
		flags: []string{"--policy-poll-interval=0s"},
		want:  `policies.pollInterval: "0s" is not positive`,
	}, {
		name: "file-only keys in env",
		env:  []string{"CLAIMWARDEN_POLICIES_PARAMS=x", "CLAIMWARDEN_POLICIES_BUNDLES=y", "CLAIMWARDEN_POLICY_DIR=/p"},
		want: "unknown environment variable CLAIMWARDEN_POLICY_DIR: no configuration key is named so\n" +
			"environment variable CLAIMWARDEN_POLICIES_BUNDLES: policies.bundles can be set in the configuration file only\n" +
			"environment variable CLAIMWARDEN_POLICIES_PARAMS: policies.params can be set in the configuration file only",
	}, {
		name: "invalid bundle in file",
		file: "policies:\n  bundles:\n  - name: org\n    url: bundles.example.com/org.tar.gz\n",
		want: `policies.bundles[0].url: "bundles.example.com/org.tar.gz" is not an http or https URL`,
	}, {
		name: "unknown nested keys in file",
		file: "leaderElection:\n  enable: true\nlog:\n  colour: red\n",
		want: `unknown keys "leaderelection.enable", "log.colour" (known keys: ...`,
	}, {
		name: "map where a value belongs",
		file: "leaderElection: true\n",
		want: `leaderElection: expected a map or struct, got "bool"`,
	}, {
		name: "unknown environment variable",
		env:  []string{"CLAIMWARDEN_UPDATE_STRATEGY=InPlace", "CLAIMWARDEN_LEADER_ELECTION=false"},
		want: "unknown environment variables CLAIMWARDEN_LEADER_ELECTION, CLAIMWARDEN_UPDATE_STRATEGY: no configuration key is named so",
	}, {
		name: "one unknown environment variable",
		env:  []string{"CLAIMWARDEN_LOGLEVEL=debug"},
		want: "unknown environment variable CLAIMWARDEN_LOGLEVEL: no configuration key is named so",
	}, {
		name: "invalid value in file",
		file: "updateStrategy: Sideways\n",
		want: `updateStrategy: "Sideways" is not one of InPlace, OnClaimDelete`,
	}, {
		name: "invalid value in env",
		env:  []string{"CLAIMWARDEN_LOG_LEVEL=warn"},
		want: `log.level: "warn" is not one of debug, info, error`,
	}, {
		name:  "invalid value by flag",
		flags: []string{"--max-concurrent-patches=0"},
		want:  `maxConcurrentPatches: "0" is less than 1`,
	}, {
		name:  "no claims per StatefulSet",
		flags: []string{"--max-claims-per-statefulset=0"},
		want:  `maxClaimsPerStatefulSet: "0" is less than 1`,
	}, {
		name: "not a number in env",
		env:  []string{"CLAIMWARDEN_MAXCONCURRENTPATCHES=many"},
		want: `maxConcurrentPatches: "many" is not a valid int`,
	}, {
		name: "not a boolean in file",
		file: "leaderElection:\n  enabled: maybe\n",
		want: `leaderElection.enabled: "maybe" is not a valid bool`,
	}, {
		name: "several problems at once",
		file: "log:\n  level: trace\n  format: xml\n",
		want: "log.level: \"trace\" is not one of debug, info, error\nlog.format: \"xml\" is not one of json, console",
	}, {
		name: "file that is not YAML",
		file: "log: [\n",
		want: "reading config file ...",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeConfig(t, tt.file)
			}
			_, err := Load(parsedFlags(t, tt.flags...), path, tt.env)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			got := err.Error()
			if tt.file != "" {
				// Errors about the file name it first.
				got = strings.TrimPrefix(got, "config file "+path+": ")
			}
			if prefix, ok := strings.CutSuffix(tt.want, "..."); ok {
				if !strings.HasPrefix(got, prefix) {
					t.Errorf("error = %q, want it to start with %q", got, prefix)
				}
			} else if got != tt.want {
				t.Errorf("error = %q\nwant    %q", got, tt.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.yaml")
	_, err := Load(nil, path, nil)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error = %v, want one naming %s", err, path)
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	pemFile, textFile, emptyFile, missing := filepath.Join(dir, "key.pem"), filepath.Join(dir, "key.txt"), filepath.Join(dir, "empty"), filepath.Join(dir, "missing")
	for path, content := range map[string]string{pemFile: testPEM, textFile: "not a key\n", emptyFile: ""} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// bundle sets c's only bundle: a valid one changed by change.
	bundle := func(change func(*Bundle)) func(*Config) {
		return func(c *Config) {
			b := Bundle{Name: "org", URL: "https://bundles.example.com/org.tar.gz"}
			change(&b)
			c.Policies.Bundles = []Bundle{b}
		}
	}
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"namespace name", func(c *Config) { c.Namespaces = []string{"ok", "Not_OK"} },
			`namespaces: "Not_OK" is not a namespace name: a lowercase RFC 1123 label must consist of ...`},
		{"empty namespace", func(c *Config) { c.Namespaces = []string{""} },
			`namespaces: "" is not a namespace name: ...`},
		{"label selector", func(c *Config) { c.LabelSelector = "app in (db" },
			`labelSelector: "app in (db" is not a label selector: ...`},
		{"update strategy", func(c *Config) { c.UpdateStrategy = "Sideways" },
			`updateStrategy: "Sideways" is not one of InPlace, OnClaimDelete`},
		{"update strategy is case-sensitive", func(c *Config) { c.UpdateStrategy = "inplace" },
			`updateStrategy: "inplace" is not one of InPlace, OnClaimDelete`},
		{"max concurrent patches", func(c *Config) { c.MaxConcurrentPatches = -1 },
			`maxConcurrentPatches: "-1" is less than 1`},
		{"metrics address without port", func(c *Config) { c.MetricsAddr = "8080" },
			`metricsAddr: "8080" is not "0" or host:port: address 8080: missing port in address`},
		{"health address port", func(c *Config) { c.HealthAddr = ":http" },
			`healthAddr: ":http" has no port number between 0 and 65535`},
		{"health address empty", func(c *Config) { c.HealthAddr = "" },
			`healthAddr: "" is not "0" or host:port: missing port in address`},
		{"leader election namespace", func(c *Config) { c.LeaderElection.Namespace = "" },
			`leaderElection.namespace: "" is not a namespace name: ...`},
		{"leader election id", func(c *Config) { c.LeaderElection.ID = "Claim Warden" },
			`leaderElection.id: "Claim Warden" is not a Lease name: ...`},
		{"journal key namespace", func(c *Config) { c.JournalKey.Namespace = "" },
			`journalKey.namespace: "" is not a namespace name: ...`},
		{"journal key Secret name", func(c *Config) { c.JournalKey.SecretName = "Journal Key" },
			`journalKey.secretName: "Journal Key" is not a Secret name: ...`},
		{"log level", func(c *Config) { c.Log.Level = "INFO" },
			`log.level: "INFO" is not one of debug, info, error`},
		{"log format", func(c *Config) { c.Log.Format = "text" },
			`log.format: "text" is not one of json, console`},

		{"empty policy dir", func(c *Config) { c.Policies.Dirs = []string{"/policies", ""} },
			`policies.dirs: "" is not a path`},
		{"policy poll interval zero", func(c *Config) { c.Policies.PollInterval = 0 },
			`policies.pollInterval: "0s" is not positive`},
		{"policy poll interval negative", func(c *Config) { c.Policies.PollInterval = -time.Second },
			`policies.pollInterval: "-1s" is not positive`},
		{"decision log mask outside the event", func(c *Config) { c.Policies.DecisionLogMask = []string{"/input/source", "/custom/x"} },
			`policies.decisionLogMask: "/custom/x" is not a JSON pointer into /input, /result or /nd_builtin_cache`},
		{"policy value limit negative", func(c *Config) { c.Policies.ValueLimitBytes = -1 },
			`policies.valueLimitBytes: "-1" is negative`},
		{"policy memory budget negative", func(c *Config) { c.Policies.MemoryBudgetBytes = -1 },
			`policies.memoryBudgetBytes: "-1" is negative`},
		{"policy timeout zero", func(c *Config) { c.Policies.Timeout = 0 },
			`policies.timeout: "0s" is not positive`},
		{"policy timeout above a minute", func(c *Config) { c.Policies.Timeout = time.Minute + time.Millisecond },
			`policies.timeout: "1m0.001s" is longer than 1m0s`},
		{"autoresize concurrency zero", func(c *Config) { c.Autoresize.Concurrency = 0 },
			`autoresize.concurrency: "0" is not between 1 and 64: it is how many StatefulSets are checked at once`},
		{"autoresize concurrency above the maximum", func(c *Config) { c.Autoresize.Concurrency = 65 },
			`autoresize.concurrency: "65" is not between 1 and 64: it is how many StatefulSets are checked at once`},
		{"autoresize check timeout below 10s", func(c *Config) { c.Autoresize.CheckTimeout = time.Second },
			`autoresize.checkTimeout: "1s" is not between 10s and 1h: it is the deadline of one StatefulSet's check`},
		{"policy ConfigMap namespace", func(c *Config) { c.Policies.ConfigMapNamespace = "Policies" },
			`policies.configMapNamespace: "Policies" is not a namespace name: ...`},
		{"policy ConfigMap namespace empty", func(c *Config) { c.Policies.ConfigMapNamespace = "" },
			`policies.configMapNamespace: "" is not a namespace name: ...`},

		{"bundle without name", bundle(func(b *Bundle) { b.Name = "" }),
			`policies.bundles[0].name: "" is not a bundle name: ...`},
		{"bundle name not a DNS label", bundle(func(b *Bundle) { b.Name = "org/claims" }),
			`policies.bundles[0].name: "org/claims" is not a bundle name: a lowercase RFC 1123 label must consist of ...`},
		{"bundle names not unique", func(c *Config) {
			c.Policies.Bundles = []Bundle{{Name: "org", URL: "https://a/x"}, {Name: "team", URL: "https://a/y"}, {Name: "org", URL: "https://b/x"}}
		}, `policies.bundles[2].name: "org" is also the name of policies.bundles[0]`},
		{"bundle without URL", bundle(func(b *Bundle) { b.URL = "" }),
			`policies.bundles[0].url: "" is not an http or https URL`},
		{"bundle URL scheme", bundle(func(b *Bundle) { b.URL = "s3://bucket/org.tar.gz" }),
			`policies.bundles[0].url: "s3://bucket/org.tar.gz" is not an http or https URL`},
		{"bundle URL without host", bundle(func(b *Bundle) { b.URL = "https:///org.tar.gz" }),
			`policies.bundles[0].url: "https:///org.tar.gz" is not an http or https URL`},
		{"bundle URL unparsable", bundle(func(b *Bundle) { b.URL = "https://[::1/org.tar.gz" }),
			`policies.bundles[0].url: "https://[::1/org.tar.gz" is not a URL: ...`},
		{"bundle pollMin negative", bundle(func(b *Bundle) { b.PollMin = -time.Second }),
			`policies.bundles[0].pollMin: "-1s" is negative`},
		{"bundle pollMax negative", bundle(func(b *Bundle) { b.PollMax = -time.Second }),
			`policies.bundles[0].pollMax: "-1s" is negative`},
		{"bundle pollMax below pollMin", bundle(func(b *Bundle) { b.PollMin, b.PollMax = time.Minute, 30*time.Second }),
			`policies.bundles[0].pollMax: "30s" is shorter than pollMin (1m0s)`},
		{"bundle size limit negative", bundle(func(b *Bundle) { b.SizeLimitBytes = -1 }),
			`policies.bundles[0].sizeLimitBytes: "-1" is negative`},
		{"bundle total size limit negative", bundle(func(b *Bundle) { b.TotalSizeLimitBytes = -1 }),
			`policies.bundles[0].totalSizeLimitBytes: "-1" is negative`},
		{"bundle download timeout negative", bundle(func(b *Bundle) { b.DownloadTimeout = -time.Second }),
			`policies.bundles[0].downloadTimeout: "-1s" is negative`},
		{"bundle trigger", bundle(func(b *Bundle) { b.Trigger = "hourly" }),
			`policies.bundles[0].trigger: "hourly" is not periodic or manual`},
		{"bundle algorithm", bundle(func(b *Bundle) { b.PublicKeyFile, b.Algorithm = pemFile, "RS128" }),
			`policies.bundles[0].algorithm: "RS128" is not one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, HS256, HS384, HS512`},
		{"bundle algorithm is case-sensitive", bundle(func(b *Bundle) { b.PublicKeyFile, b.Algorithm = pemFile, "es256" }),
			`policies.bundles[0].algorithm: "es256" is not one of ...`},
		{"bundle verification settings without key", bundle(func(b *Bundle) { b.KeyID, b.Algorithm, b.Scope = "k1", "ES256", "claims" }),
			"policies.bundles[0].keyID: \"k1\" is set but publicKeyFile is not: the bundle's signature would not be verified\n" +
				"policies.bundles[0].algorithm: \"ES256\" is set but publicKeyFile is not: the bundle's signature would not be verified\n" +
				"policies.bundles[0].scope: \"claims\" is set but publicKeyFile is not: the bundle's signature would not be verified"},
		{"bundle token file missing", bundle(func(b *Bundle) { b.TokenFile = missing }),
			`policies.bundles[0].tokenFile: "` + missing + `" cannot be read: open ` + missing + `: no such file or directory`},
		{"bundle token file is a directory", bundle(func(b *Bundle) { b.TokenFile = dir }),
			`policies.bundles[0].tokenFile: "` + dir + `" cannot be read: ...`},
		{"bundle CA file not PEM", bundle(func(b *Bundle) { b.CACertFile = textFile }),
			`policies.bundles[0].caCertFile: "` + textFile + `" holds no PEM block`},
		{"bundle public key missing", bundle(func(b *Bundle) { b.PublicKeyFile = missing }),
			`policies.bundles[0].publicKeyFile: "` + missing + `" cannot be read: ...`},
		{"bundle public key not PEM", bundle(func(b *Bundle) { b.PublicKeyFile = textFile }),
			`policies.bundles[0].publicKeyFile: "` + textFile + `" holds no PEM block`},
		{"bundle HMAC secret empty", bundle(func(b *Bundle) { b.PublicKeyFile, b.Algorithm = emptyFile, "HS256" }),
			`policies.bundles[0].publicKeyFile: "` + emptyFile + `" is empty`},
		{"second bundle named by its index", func(c *Config) {
			c.Policies.Bundles = []Bundle{{Name: "org", URL: "https://a/x"}, {Name: "team", URL: "https://a/y", Trigger: "Manual"}}
		}, `policies.bundles[1].trigger: "Manual" is not periodic or manual`},

		{"param JSON cannot encode", func(c *Config) {
			c.Policies.Params = map[string]any{"ok": 1, "limits": map[string]any{"max": math.NaN()}}
		}, `policies.params.limits: "map[max:NaN]" cannot be encoded as JSON: json: unsupported value: NaN`},
		{"decision logs JSON cannot encode", func(c *Config) {
			c.Policies.DecisionLogs = map[string]any{"labels": map[any]any{1: "one"}}
		}, `policies.decisionLogs.labels: "map[1:one]" cannot be encoded as JSON: json: unsupported type: map[interface {}]interface {}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.change(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate succeeded, want an error")
			}
			if prefix, ok := strings.CutSuffix(tt.want, "..."); ok {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("error = %q, want it to start with %q", err, prefix)
				}
			} else if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	c := Default()
	c.Namespaces = []string{"apps", "data-1"}
	c.LabelSelector = "app in (db,cache),tier!=test,!legacy"
	c.UpdateStrategy = v1alpha1.OnClaimDelete
	c.MaxConcurrentPatches = 10
	c.MetricsAddr = "0"
	c.HealthAddr = "0"
	c.LeaderElection.ID = "claimwarden.example.com"
	c.Log = Log{Level: "debug", Format: "console"}

	dir := t.TempDir()
	keyFile, secretFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "secret")
	for path, content := range map[string]string{keyFile: testPEM, secretFile: "not PEM, a shared secret"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c.Policies = Policies{
		Dirs:         []string{"/etc/claimwarden/policies", "/extra/limits.rego"},
		PollInterval: time.Second,
		Timeout:      MaxPolicyTimeout,
		// Without ConfigMaps their namespace is not used, so not checked.
		ConfigMaps:         false,
		ConfigMapNamespace: "",
		Bundles: []Bundle{
			{Name: "org", URL: "https://bundles.example.com/org.tar.gz", PublicKeyFile: keyFile, KeyID: "k1", Scope: "claims", Trigger: "periodic"},
			{Name: "team-1", URL: "http://bundle-server:8080/t.tar.gz", PublicKeyFile: secretFile, Algorithm: "HS512", PollMax: time.Minute, Trigger: "manual"},
			{Name: "equal-polls", URL: "https://b/x", PollMin: time.Minute, PollMax: time.Minute, SizeLimitBytes: 0},
		},
		Params:       map[string]any{"max_step_bytes": nil, "disabled": []any{"class-must-match"}, "tiers": map[string]any{"gold": 1.5}},
		DecisionLogs: map[string]any{"decision_logs": map[string]any{"console": true}},
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	sel, err := c.Selector()
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set{"app": "db", "tier": "prod"}) || sel.Matches(labels.Set{"app": "web"}) {
		t.Errorf("Selector() = %s does not select as written", sel)
	}
}

// TestShippedConfigFile loads the file the Deployment mounts: it must stay
// valid and spell out the defaults.
func TestShippedConfigFile(t *testing.T) {
	c, err := Load(nil, "manager/config.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Default(), c, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("manager/config.yaml differs from Default() (-want +got):\n%s", diff)
	}
}

func TestFluxKeys(t *testing.T) {
	path := writeConfig(t, "flux:\n  enabled: true\n  namespaces: [flux-system]\n  maxArtifactSize: 1048576\n  maxCacheSize: 536870912\n  maxReleaseBytes: 1048576\n  defaultServiceAccount: default\n")
	cfg, err := Load(parsedFlags(t, "--flux-artifact-cache-dir", "/var/cache/cw", "--flux-helm-releases", "--flux-no-cross-namespace-refs"), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Flux{Enabled: true, Namespaces: []string{"flux-system"}, ArtifactCacheDir: "/var/cache/cw", MaxArtifactSize: 1 << 20, MaxCacheSize: 512 << 20, MaxBuildBytes: 8 << 20, MaxBuildNodes: 600000,
		HelmReleases: true, MaxReleaseBytes: 1 << 20, DefaultServiceAccount: "default", NoCrossNamespaceRefs: true}
	if !reflect.DeepEqual(cfg.Flux, want) {
		t.Errorf("Flux = %+v, want %+v", cfg.Flux, want)
	}
	for yaml, wantErr := range map[string]string{
		"flux:\n  maxArtifactSize: 0\n":        "flux.maxArtifactSize",
		"flux:\n  maxReleaseBytes: -1\n":       "flux.maxReleaseBytes",
		"flux:\n  namespaces: [Flux_System]\n": "flux.namespaces",
		// Not room for one download: the archive and its extraction.
		"flux:\n  maxCacheSize: 268435456\n":           "flux.maxCacheSize",
		"flux:\n  maxBuildBytes: -1\n":                 "flux.maxBuildBytes",
		"flux:\n  maxBuildNodes: -5\n":                 "flux.maxBuildNodes",
		"flux:\n  defaultServiceAccount: Not_A_Name\n": "flux.defaultServiceAccount",
	} {
		if _, err := Load(nil, writeConfig(t, yaml), nil); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: error %v, want one naming %s", yaml, err, wantErr)
		}
	}
}

func TestArgoCDKeys(t *testing.T) {
	path := writeConfig(t, "argocd:\n  enabled: true\n  namespaces: [argocd, team-apps]\n  tokenSecretRef: {name: argo-token}\n  caFile: /etc/claimwarden/argocd-ca.pem\n")
	cfg, err := Load(parsedFlags(t, "--argocd-server", "https://argocd.example.com:8443", "--argocd-token-secret-key", "apiToken", "--argocd-control-plane-namespace", "gitops"),
		path, []string{"CLAIMWARDEN_ARGOCD_SYNCMANUALAPPS=true", "CLAIMWARDEN_ARGOCD_TOKENSECRETREF_NAMESPACE=ops"})
	if err != nil {
		t.Fatal(err)
	}
	want := ArgoCD{
		Enabled: true, Namespaces: []string{"argocd", "team-apps"}, Server: "https://argocd.example.com:8443",
		TokenSecretRef: SecretKeyRef{Namespace: "ops", Name: "argo-token", Key: "apiToken"},
		CAFile:         "/etc/claimwarden/argocd-ca.pem", SyncManualApps: true, ControlPlaneNamespace: "gitops",
	}
	if diff := cmp.Diff(want, cfg.ArgoCD); diff != "" {
		t.Errorf("ArgoCD (-want +got):\n%s", diff)
	}
	plain, err := Load(parsedFlags(t, "--argocd-server", "http://127.0.0.1:8080", "--argocd-plaintext"), "", nil)
	if err != nil {
		t.Fatalf("plaintext http server: %v", err)
	}
	if !plain.ArgoCD.Plaintext {
		t.Error("--argocd-plaintext not set")
	}
	for yaml, wantErr := range map[string]string{
		"argocd:\n  namespaces: [Argo_CD]\n":                                 `argocd.namespaces: "Argo_CD" is not a namespace name`,
		"argocd:\n  server: argocd-server:443\n":                             `argocd.server: "argocd-server:443" is not an http or https URL`,
		"argocd:\n  server: http://argocd-server\n":                          `argocd.server: "http://argocd-server" is plain http, which sends the token unencrypted: set argocd.plaintext`,
		"argocd:\n  plaintext: true\n":                                       `argocd.plaintext: "true" is set, but argocd.server https://argocd-server.argocd.svc is https`,
		"argocd:\n  server: http://a\n  plaintext: true\n  insecure: true\n": `argocd.server: "http://a" is plain http: argocd.insecure and argocd.caFile apply to https only`,
		"argocd:\n  insecure: true\n  caFile: /ca.pem\n":                     `argocd.caFile: "/ca.pem" is set together with argocd.insecure`,
		"argocd:\n  server: https://admin:pw@argocd\n":                       `argocd.server: "https://xxxxx@argocd" holds a user name or password`,
		"argocd:\n  tokenSecretRef: {name: Bad_Name}\n":                      `argocd.tokenSecretRef.name: "Bad_Name" is not a Secret name`,
		"argocd:\n  tokenSecretRef: {key: \"a/b\"}\n":                        `argocd.tokenSecretRef.key: "a/b" is not a Secret key`,
		"argocd:\n  tokenSecretRef: {nam: x}\n":                              `unknown key "argocd.tokensecretref.nam"`,
		"argocd:\n  syncManualApps: maybe\n":                                 `argocd.syncManualApps: "maybe" is not a valid bool`,
	} {
		if _, err := Load(nil, writeConfig(t, yaml), nil); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: error %v, want one containing %s", yaml, err, wantErr)
		}
	}
}

func TestHelm(t *testing.T) {
	c, err := Load(parsedFlags(t, "--helm", "--helm-namespaces", "apps,db"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Helm.Enabled || !reflect.DeepEqual(c.Helm.Namespaces, []string{"apps", "db"}) {
		t.Errorf("helm = %+v, want enabled in apps and db", c.Helm)
	}
	for yaml, wantErr := range map[string]string{
		"helm:\n  enabled: true\n":                   `helm.namespaces: "[]" is empty: name the release namespaces to watch`,
		"helm:\n  namespaces: [Apps]\n":              `helm.namespaces: "Apps" is not a namespace name`,
		"helm:\n  maxReleaseBytes: 0\n":              `helm.maxReleaseBytes: "0" is not a positive number of bytes`,
		"helm:\n  enabled: true\n  namespace: [a]\n": `unknown key "helm.namespace"`,
	} {
		if _, err := Load(nil, writeConfig(t, yaml), nil); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: error %v, want one containing %s", yaml, err, wantErr)
		}
	}
}
