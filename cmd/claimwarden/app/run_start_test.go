package app

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// logLines collects a process's JSON log lines as they are written.
type logLines struct {
	mu    sync.Mutex
	lines []map[string]any
	raw   []string
}

func (l *logLines) add(line string) {
	var m map[string]any
	_ = json.Unmarshal([]byte(line), &m) // klog may write a plain line; it is kept raw
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, m)
	l.raw = append(l.raw, line)
}

func (l *logLines) has(ok func(map[string]any) bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.lines, ok)
}

// TestCleanStartLogsNoError starts `claimwarden run` against a control plane
// with nothing wrong: policies and caches still loading is not an error, so
// no line is logged at ERROR level from start to SIGTERM.
func TestCleanStartLogsNoError(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")}})
	cmd := exec.Command(os.Args[0], "run", "--kubeconfig", env.Kubeconfig, "--leader-election=false",
		"--metrics-addr", "0", "--health-addr", "0")
	cmd.Env = []string{mainEnv + "=1"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &logLines{}
	read := make(chan struct{})
	go func() {
		defer close(read)
		s := bufio.NewScanner(stderr)
		s.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for s.Scan() {
			logs.add(s.Text())
		}
	}()
	done := make(chan error, 1)
	go func() { <-read; done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-done
		}
	})

	// Loaded: the policies compiled without a failure (the ConfigMaps were
	// read), and the rollout controller's workers run.
	loaded := func() bool {
		return logs.has(func(m map[string]any) bool { return m["msg"] == "policies compiled" }) &&
			logs.has(func(m map[string]any) bool {
				return m["msg"] == "Starting workers" && m["controller"] == "volumeclaimrollout"
			})
	}
	deadline := time.Now().Add(60 * time.Second)
	for !loaded() {
		select {
		case err := <-done:
			t.Fatalf("claimwarden exited early (%v):\n%s", err, strings.Join(logs.raw, "\n"))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not loaded within 60s:\n%s", strings.Join(logs.raw, "\n"))
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v, want exit code 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("claimwarden did not exit within 30s of SIGTERM")
	}
	// The real API server has API Priority and Fairness, so the default
	// kubeAPIQPS 0 leaves no client-side limit.
	if !logs.has(func(m map[string]any) bool {
		return m["msg"] == "starting" && m["clientRateLimit"] == "none: the API server has API Priority and Fairness"
	}) {
		t.Errorf("no starting line with clientRateLimit none:\n%s", strings.Join(logs.raw, "\n"))
	}
	for i, m := range logs.lines {
		if m == nil || m["level"] == "error" {
			t.Errorf("not an info line: %s", logs.raw[i])
		}
	}
}
