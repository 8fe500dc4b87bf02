package e2e

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// controller is one `claimwarden run` process.
type controller struct {
	*controllerproc.Process
}

// startController runs the binary as the ServiceAccount, with leader election
// on in claimwarden-system as deployed, and waits until it serves /readyz
// (which it does before it wins the Lease). The test's cleanup stops it and
// then fails the test if its log shows a request the RBAC refused.
func startController(t *testing.T, cl *cluster, name string, extraArgs ...string) *controller {
	t.Helper()
	return startBinary(t, cl, cl.binary, name, extraArgs...)
}

// startBinary is startController with another build of claimwarden (an
// older release, for upgrades).
func startBinary(t *testing.T, cl *cluster, binary, name string, extraArgs ...string) *controller {
	t.Helper()
	return launch(t, cl, name, launchOptions{binary: binary, leaderElection: true, args: extraArgs})
}

// launchOptions vary what startController runs.
type launchOptions struct {
	binary         string
	leaderElection bool
	env            []string
	args           []string
}

// launch is startController with the binary, leader election and
// environment chosen. Without leader election the journal key stays in
// claimwarden-system, where config/rbac lets the ServiceAccount keep it.
func launch(t *testing.T, cl *cluster, name string, o launchOptions) *controller {
	t.Helper()
	popts := controllerproc.Options{
		Name:       "controller " + name,
		Binary:     o.binary,
		Kubeconfig: cl.kubeconfig,
		Log:        filepath.Join(env.Dir, strings.NewReplacer("/", "_").Replace(t.Name())+"-"+name+".log"),
		LogFormat:  "json",
		Metrics:    true,
		ExtraArgs:  o.args,
		Env:        o.env,
	}
	if o.leaderElection {
		popts.LeaderElectionNamespace = controllerNamespace
	} else {
		popts.ExtraArgs = append([]string{"--journal-key-namespace", controllerNamespace}, o.args...)
	}
	p, err := controllerproc.Start(popts)
	if err != nil {
		t.Fatal(err)
	}
	c := &controller{p}
	addControllerLog(c.LogPath())
	t.Cleanup(func() {
		c.stop(t)
		if lines := c.forbidden(t); len(lines) > 0 {
			t.Errorf("%s was refused requests by the RBAC of config/rbac (log %s):\n%s", c.Name(), c.LogPath(), strings.Join(lines, "\n"))
		}
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", c.LogPath(), testenv.TailFile(c.LogPath(), 40))
		}
	})
	if err := c.WaitReady(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	return c
}

// kill SIGKILLs the process, as an OOM kill or a node loss would: no
// deferred work runs and the Lease is not released.
func (c *controller) kill(t *testing.T) {
	t.Helper()
	if err := c.Exited(); err != nil {
		t.Fatalf("before SIGKILL: %v", err)
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
}

// terminate sends SIGTERM, as a rolling update does, and requires a clean exit
// within the grace period.
func (c *controller) terminate(t *testing.T, grace time.Duration) {
	t.Helper()
	if err := c.Exited(); err != nil {
		t.Fatalf("before SIGTERM: %v", err)
	}
	if err := c.Shutdown(grace); err != nil {
		t.Error(err)
	}
}

// stop ends the process if it still runs (cleanup), SIGKILL after a grace
// period. How it ends is not judged here: terminate tests that.
func (c *controller) stop(t *testing.T) {
	const grace = 15 * time.Second
	if c.Terminate(grace) {
		t.Logf("%s ignored SIGTERM for %s; killed it", c.Name(), grace)
	}
}

// forbidden returns the log lines reporting a request the API server refused
// as unauthorized: a permission config/rbac lacks. Some such failures are
// retried forever without stopping the rollout (an informer that cannot list,
// an event that cannot be written), so the log is the only place they show.
// Lines written while a test had kube-apiserver or etcd down are not
// counted (apiOutages).
func (c *controller) forbidden(t *testing.T) []string {
	f, err := os.Open(c.LogPath())
	if err != nil {
		t.Error(err)
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if l := strings.ToLower(sc.Text()); (strings.Contains(l, "forbidden") || strings.Contains(l, "unauthorized")) && !duringAPIOutage(sc.Text()) {
			out = append(out, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Error(err)
	}
	return out
}

// logContains reports whether some log line contains s.
func (c *controller) logContains(s string) bool {
	data, err := os.ReadFile(c.LogPath())
	return err == nil && strings.Contains(string(data), s)
}

// acceptedPatches reads claimwarden_claim_patches_total{result="accepted"}
// from the process's /metrics: the patches this process sent and the API
// server accepted. A process that never patched has no such series: 0.
func (c *controller) acceptedPatches(t *testing.T) int {
	t.Helper()
	return c.counter(t, `claimwarden_claim_patches_total{cluster="in-cluster",result="accepted"}`)
}

// counter scrapes the controller's metrics for one series; 0 when absent.
func (c *controller) counter(t *testing.T, series string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := testenv.HTTPGet(ctx, http.DefaultClient, "http://"+c.MetricsAddr+"/metrics")
	if err != nil {
		t.Fatalf("scraping %s: %v", c.Name(), err)
	}
	// A counter vector shows no series, not even its TYPE line, until a
	// first increment; callers that expect one catch a renamed metric.
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", c.Name(), line, err)
			}
			return int(n)
		}
	}
	return 0
}
