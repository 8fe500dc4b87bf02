package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/config"
)

// result is what one run of the command line produced.
type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, environ []string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := execute(context.Background(), args, environ, &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVersion(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v1.2.3"

	got := runCLI(t, nil, "version")
	want := fmt.Sprintf("claimwarden v1.2.3 %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if got.code != exitOK || got.stdout != want || got.stderr != "" {
		t.Errorf("version = %+v, want exit 0 and stdout %q", got, want)
	}

	// A test binary records no module version, so an unset Version reads "dev".
	Version = ""
	if got := runCLI(t, nil, "version"); !strings.HasPrefix(got.stdout, "claimwarden dev go") {
		t.Errorf("version without ldflags = %q, want it to start with %q", got.stdout, "claimwarden dev go")
	}
}

func TestSubcommands(t *testing.T) {
	var names []string
	for _, c := range newRootCommand(nil).Commands() {
		names = append(names, c.Name())
	}
	if !slices.Equal(names, []string{"check", "run", "version"}) {
		t.Errorf("subcommands = %v, want [check run version]", names)
	}
}

func TestErrors(t *testing.T) {
	unknownKey := writeFile(t, "config.yaml", "updateStrategy: InPlace\nmaxConcurrentPatch: 2\n")
	badValue := writeFile(t, "config.yaml", "log:\n  format: xml\n")
	// Hide an in-cluster configuration of the machine running the tests.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")

	tests := []struct {
		name    string
		args    []string
		environ []string
		code    int
		stderr  string // exact, or a prefix when it ends with "..."
	}{{
		name:   "unknown command",
		args:   []string{"apply"},
		code:   exitUsage,
		stderr: "claimwarden: unknown command \"apply\" for \"claimwarden\"\nRun 'claimwarden --help' for usage.\n",
	}, {
		name:   "completion is not a command",
		args:   []string{"completion", "bash"},
		code:   exitUsage,
		stderr: "claimwarden: unknown command \"completion\" for \"claimwarden\"\n...",
	}, {
		name:   "unknown flag",
		args:   []string{"run", "--namespace=apps"},
		code:   exitUsage,
		stderr: "claimwarden: unknown flag: --namespace\nRun 'claimwarden run --help' for usage.\n",
	}, {
		name:   "flag value of the wrong type",
		args:   []string{"run", "--max-concurrent-patches=two"},
		code:   exitUsage,
		stderr: "claimwarden: invalid argument \"two\" for \"--max-concurrent-patches\" flag: ...",
	}, {
		name:   "arguments to version",
		args:   []string{"version", "--short"},
		code:   exitUsage,
		stderr: "claimwarden: unknown flag: --short\nRun 'claimwarden version --help' for usage.\n",
	}, {
		name:   "positional argument to run",
		args:   []string{"run", "extra"},
		code:   exitUsage,
		stderr: "claimwarden: unknown command \"extra\" for \"claimwarden run\"\n...",
	}, {
		name:   "unknown key in the config file",
		args:   []string{"run", "--config", unknownKey},
		code:   exitFailure,
		stderr: "claimwarden: config file " + unknownKey + ": unknown key \"maxconcurrentpatch\" (known keys: ...",
	}, {
		name:   "invalid value in the config file",
		args:   []string{"run", "--config", badValue},
		code:   exitFailure,
		stderr: "claimwarden: log.format: \"xml\" is not one of json, console\n",
	}, {
		name:   "invalid value by flag",
		args:   []string{"run", "--update-strategy=Sideways"},
		code:   exitFailure,
		stderr: "claimwarden: updateStrategy: \"Sideways\" is not one of InPlace, OnClaimDelete\n",
	}, {
		name:    "unknown environment variable",
		args:    []string{"run"},
		environ: []string{"HOME=/root", "CLAIMWARDEN_LEADER_ELECT=false"},
		code:    exitFailure,
		stderr:  "claimwarden: unknown environment variable CLAIMWARDEN_LEADER_ELECT: no configuration key is named so\n",
	}, {
		name:   "missing config file",
		args:   []string{"run", "--config", "/nonexistent/claimwarden.yaml"},
		code:   exitFailure,
		stderr: "claimwarden: reading config file /nonexistent/claimwarden.yaml: ...",
	}, {
		name:   "missing kubeconfig",
		args:   []string{"run", "--kubeconfig", "/nonexistent/kubeconfig"},
		code:   exitFailure,
		stderr: "claimwarden: kubeconfig /nonexistent/kubeconfig: ...",
	}, {
		name:   "outside a cluster without kubeconfig",
		args:   []string{"run"},
		code:   exitFailure,
		stderr: "claimwarden: in-cluster configuration (set kubeconfig to run outside a cluster): ...",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runCLI(t, tt.environ, tt.args...)
			if got.code != tt.code {
				t.Errorf("exit code = %d, want %d (stderr %q)", got.code, tt.code, got.stderr)
			}
			if prefix, ok := strings.CutSuffix(tt.stderr, "..."); ok {
				if !strings.HasPrefix(got.stderr, prefix) {
					t.Errorf("stderr = %q, want it to start with %q", got.stderr, prefix)
				}
			} else if got.stderr != tt.stderr {
				t.Errorf("stderr = %q\nwant     %q", got.stderr, tt.stderr)
			}
			if got.stdout != "" {
				t.Errorf("stdout = %q, want nothing", got.stdout)
			}
		})
	}
}

func TestManagerOptions(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsAddr = "0"
	cfg.HealthAddr = ":9440"
	cfg.LeaderElection = config.LeaderElection{Enabled: true, Namespace: "ops", ID: "cw.example.com"}

	opts, err := managerOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Metrics.BindAddress != "0" || opts.HealthProbeBindAddress != ":9440" {
		t.Errorf("metrics %q, probes %q: want 0 and :9440", opts.Metrics.BindAddress, opts.HealthProbeBindAddress)
	}
	if !opts.LeaderElection || opts.LeaderElectionNamespace != "ops" || opts.LeaderElectionID != "cw.example.com" || !opts.LeaderElectionReleaseOnCancel {
		t.Errorf("leader election options = %v %q %q release=%v", opts.LeaderElection, opts.LeaderElectionNamespace, opts.LeaderElectionID, opts.LeaderElectionReleaseOnCancel)
	}
	if opts.Cache.DefaultNamespaces != nil {
		t.Errorf("no namespaces configured, but the cache is restricted to %v", opts.Cache.DefaultNamespaces)
	}
	// The cache keeps no managedFields of any object it holds.
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	if opts.Cache.DefaultTransform == nil {
		t.Error("the cache has no default transform; managedFields would be cached")
	} else if out, err := opts.Cache.DefaultTransform(pvc); err != nil || out.(*corev1.PersistentVolumeClaim).ManagedFields != nil {
		t.Errorf("the cache's default transform left managedFields: %v (err %v)", out, err)
	}
	for _, obj := range []k8sruntime.Object{&appsv1.StatefulSet{}, &v1alpha1.VolumeClaimRollout{}} {
		if gvks, _, err := opts.Scheme.ObjectKinds(obj); err != nil || len(gvks) == 0 {
			t.Errorf("scheme does not know %T: %v", obj, err)
		}
	}

	cfg.Namespaces = []string{"apps", "data"}
	cfg.LeaderElection.Enabled = false
	opts, err = managerOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]cache.Config{"apps": {}, "data": {}}
	if len(opts.Cache.DefaultNamespaces) != len(want) {
		t.Errorf("cache namespaces = %v, want %v", opts.Cache.DefaultNamespaces, want)
	}
	for ns := range want {
		if _, ok := opts.Cache.DefaultNamespaces[ns]; !ok {
			t.Errorf("cache namespaces = %v, want %v", opts.Cache.DefaultNamespaces, want)
		}
	}
	if opts.LeaderElection {
		t.Error("leader election on, want off")
	}
	if len(opts.Cache.ByObject) != 0 {
		t.Errorf("no GitOps integration on, but per-object cache rules %v", opts.Cache.ByObject)
	}

	// Kustomizations and Applications are cached in their own namespaces,
	// not restricted to the StatefulSets'.
	cfg.Flux.Enabled, cfg.ArgoCD.Enabled = true, true
	cfg.ArgoCD.Namespaces = []string{"argocd", "apps-team"}
	if opts, err = managerOptions(cfg); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for obj, by := range opts.Cache.ByObject {
		gvk := obj.GetObjectKind().GroupVersionKind().Kind
		if gvk == "" {
			gvk = fmt.Sprintf("%T", obj)
		}
		for ns := range by.Namespaces {
			got[gvk] = append(got[gvk], ns)
		}
		slices.Sort(got[gvk])
	}
	wantBy := map[string][]string{"*v1.Kustomization": {cache.AllNamespaces}, "Application": {"apps-team", "argocd"}}
	if !reflect.DeepEqual(got, wantBy) {
		t.Errorf("per-object cache namespaces = %v, want %v", got, wantBy)
	}
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	logger, err := newLogger(config.Log{Level: "info", Format: "json"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	logger.V(1).Info("debug detail")
	logger.Info("patched", "pvc", "data-db-0")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("want exactly one JSON line (debug suppressed at info), got %q: %v", buf.String(), err)
	}
	if line["msg"] != "patched" || line["pvc"] != "data-db-0" {
		t.Errorf("log line = %v", line)
	}

	buf.Reset()
	logger, err = newLogger(config.Log{Level: "debug", Format: "console"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	logger.V(1).Info("debug detail")
	if out := buf.String(); !strings.Contains(out, "DEBUG\tdebug detail") {
		t.Errorf("console debug output = %q, want a DEBUG text line", out)
	}

	buf.Reset()
	logger, err = newLogger(config.Log{Level: "error", Format: "json"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("not shown")
	if buf.Len() != 0 {
		t.Errorf("info logged at level error: %q", buf.String())
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// mainEnv, when set, makes the test binary run Main instead of the tests, so
// that a test can start claimwarden as a process of its own: signals reach it,
// and controller-runtime's process-wide state (controller names, signal
// handler, loggers) is fresh.
const mainEnv = "APP_TEST_RUN_CLAIMWARDEN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) != "" {
		os.Exit(Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// TestRunServesProbes starts `claimwarden run` against an API server that does
// not answer: the manager still serves its probes and metrics, and SIGTERM
// stops it with exit code 0.
func TestRunServesProbes(t *testing.T) {
	kubeconfig := writeFile(t, "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
	metrics, health := freeAddr(t), freeAddr(t)
	cmd := exec.Command(os.Args[0], "run", "--kubeconfig", kubeconfig, "--leader-election=false",
		"--metrics-addr", metrics, "--health-addr", health)
	// Only the switch to Main: a CLAIMWARDEN_* variable of the test's own
	// environment would be rejected as unknown configuration.
	cmd.Env = []string{mainEnv + "=1"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-done
		}
	})

	get := func(url string) int {
		resp, err := http.Get(url)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(20 * time.Second)
	for get("http://"+health+"/readyz") != http.StatusOK {
		select {
		case err := <-done:
			t.Fatalf("claimwarden exited early (%v):\n%s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not answer 200 within 20s")
		}
	}
	if code := get("http://" + health + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", code)
	}
	// The metrics server starts beside the probes, not before them: /readyz
	// answering does not mean it listens yet (seen failing once under load).
	for code := get("http://" + metrics + "/metrics"); code != http.StatusOK; code = get("http://" + metrics + "/metrics") {
		if time.Now().After(deadline) {
			t.Fatalf("/metrics = %d, want 200 within 20s", code)
		}
		time.Sleep(50 * time.Millisecond) // the poll's interval; the deadline bounds it
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v, want exit code 0; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("claimwarden did not exit within 30s of SIGTERM")
	}
	if !strings.Contains(stderr.String(), `"msg":"starting"`) {
		t.Errorf("stderr has no JSON \"starting\" line:\n%s", stderr.String())
	}
}
