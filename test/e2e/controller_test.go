package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/test/fixtures"
)

// controller is one `claimwarden run` process.
type controller struct {
	name        string
	log         string // stdout and stderr, JSON lines
	metricsAddr string
	healthAddr  string
	cmd         *exec.Cmd
	done        chan struct{} // closed once the process has been reaped; err is set then
	err         error
}

// startController runs the binary as the ServiceAccount, with leader election
// on in claimwarden-system as deployed, and waits until it serves /readyz
// (which it does before it wins the Lease). The test's cleanup stops it and
// then fails the test if its log shows a request the RBAC refused.
func startController(t *testing.T, cl *cluster, name string) *controller {
	t.Helper()
	ports := freePorts(t, 2)
	c := &controller{
		name:        name,
		log:         filepath.Join(env.Dir, strings.NewReplacer("/", "_").Replace(t.Name())+"-"+name+".log"),
		metricsAddr: "127.0.0.1:" + strconv.Itoa(ports[0]),
		healthAddr:  "127.0.0.1:" + strconv.Itoa(ports[1]),
		done:        make(chan struct{}),
	}
	f, err := os.Create(c.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() // the child has its own descriptor
	c.cmd = exec.Command(cl.binary, "run",
		"--kubeconfig", cl.kubeconfig,
		"--leader-election=true",
		"--leader-election-namespace", controllerNamespace,
		"--metrics-addr", c.metricsAddr,
		"--health-addr", c.healthAddr,
		"--log-format", "json",
	)
	c.cmd.Stdout, c.cmd.Stderr = f, f
	c.cmd.Env = controllerEnv()
	c.cmd.SysProcAttr = sysProcAttr()
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.stop(t)
		if lines := c.forbidden(t); len(lines) > 0 {
			t.Errorf("controller %s was refused requests by the RBAC of config/rbac (log %s):\n%s", name, c.log, strings.Join(lines, "\n"))
		}
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", c.log, c.tail(40))
		}
	})
	err = wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.exited(); err != nil {
			return false, err
		}
		_, err := httpGet(ctx, "http://"+c.healthAddr+"/readyz")
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("controller %s never served /readyz: %v\n%s", name, err, c.tail(20))
	}
	return c
}

// controllerEnv is the test's environment without KUBECONFIG (the binary gets
// an explicit --kubeconfig; one from the developer's shell must never point it
// at a real cluster) and without CLAIMWARDEN_* variables: the binary reads
// those as configuration and rejects unknown ones, and `make test` sets
// CLAIMWARDEN_TESTENV for the test binary.
func controllerEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "CLAIMWARDEN_") {
			out = append(out, kv)
		}
	}
	return out
}

// exited returns an error once the process has ended, so waits fail at once
// with the log instead of at their deadline.
func (c *controller) exited() error {
	select {
	case <-c.done:
		return fmt.Errorf("controller %s exited (%v); log %s:\n%s", c.name, c.err, c.log, c.tail(20))
	default:
		return nil
	}
}

// kill SIGKILLs the process, as an OOM kill or a node loss would: no
// deferred work runs and the Lease is not released.
func (c *controller) kill(t *testing.T) {
	t.Helper()
	if err := c.exited(); err != nil {
		t.Fatalf("before SIGKILL: %v", err)
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.done
}

// terminate sends SIGTERM, as a rolling update does, and requires a clean exit
// within the grace period.
func (c *controller) terminate(t *testing.T, grace time.Duration) {
	t.Helper()
	if err := c.exited(); err != nil {
		t.Fatalf("before SIGTERM: %v", err)
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
		if c.err != nil {
			t.Errorf("controller %s exited with %v after SIGTERM, want 0; log:\n%s", c.name, c.err, c.tail(20))
		}
	case <-time.After(grace):
		t.Errorf("controller %s still running %v after SIGTERM", c.name, grace)
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.done
	}
}

// stop ends the process if it still runs (cleanup), SIGKILL after a grace period.
func (c *controller) stop(t *testing.T) {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(15 * time.Second):
		t.Logf("controller %s ignored SIGTERM for 15s; killing it", c.name)
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.done
	}
}

// forbidden returns the log lines reporting a request the API server refused
// as unauthorized: a permission config/rbac lacks. Some such failures are
// retried forever without stopping the rollout (an informer that cannot list,
// an event that cannot be written), so the log is the only place they show.
func (c *controller) forbidden(t *testing.T) []string {
	f, err := os.Open(c.log)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if l := strings.ToLower(sc.Text()); strings.Contains(l, "forbidden") || strings.Contains(l, "unauthorized") {
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
	data, err := os.ReadFile(c.log)
	return err == nil && strings.Contains(string(data), s)
}

// tail returns the last n lines of the log.
func (c *controller) tail(n int) string {
	data, err := os.ReadFile(c.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// acceptedPatches reads claimwarden_claim_patches_total{result="accepted"}
// from the process's /metrics: the patches this process sent and the API
// server accepted. A process that never patched has no such series: 0.
func (c *controller) acceptedPatches(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := httpGet(ctx, "http://"+c.metricsAddr+"/metrics")
	if err != nil {
		t.Fatalf("scraping %s: %v", c.name, err)
	}
	// A counter vector shows no series, not even its TYPE line, until a
	// first increment; callers that expect patches catch a renamed metric.
	const series = `claimwarden_claim_patches_total{result="accepted"} `
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", c.name, line, err)
			}
			return int(n)
		}
	}
	return 0
}

// httpGet returns the body of a 200 response.
func httpGet(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), nil
}

// freePorts returns n distinct free loopback ports (all listeners stay open
// until every port is chosen, so they differ).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}
