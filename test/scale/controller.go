package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// controllerProc is the claimwarden binary running as its own process, as it
// does in a cluster: its memory and its client metrics are its own.
type controllerProc struct {
	cmd        *exec.Cmd
	log        string
	metricsURL string
	readyURL   string
	done       chan struct{} // closed once reaped; err is set then
	err        error

	mu      sync.Mutex
	peakRSS int64 // largest VmRSS sampled, KiB
}

// buildController compiles ./cmd/claimwarden from the module root into dir,
// so the run measures the source it is run from, with the version stamp
// the Makefile's build target gives it.
func buildController(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "claimwarden")
	version := gitOutput(ctx, root, "describe", "--tags", "--always", "--dirty")
	if version == "" {
		version = "dev"
	}
	cmd := exec.CommandContext(ctx, "go", "build",
		"-ldflags", "-X github.com/claimwarden/claimwarden/cmd/claimwarden/app.Version="+version,
		"-o", bin, "./cmd/claimwarden")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/claimwarden: %w\n%s", err, out)
	}
	return bin, nil
}

// controllerVersion is what `claimwarden version` prints.
func controllerVersion(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

// sourceState names the commit measured and the uncommitted changes (from
// git status, untracked files included: go build compiles them) in the
// packages of this module the controller is built from (go list -deps),
// since others may be editing the checkout while it runs.
func sourceState(ctx context.Context, root string) string {
	head := gitOutput(ctx, root, "rev-parse", "--short", "HEAD")
	if head == "" {
		return "unknown (not a git checkout?)"
	}
	list := exec.CommandContext(ctx, "go", "list", "-deps",
		"-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./cmd/claimwarden")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		return "commit " + head + ", uncommitted changes unknown (go list: " + err.Error() + ")"
	}
	paths := []string{"go.mod", "go.sum"}
	for _, dir := range strings.Fields(string(out)) {
		if rel, err := filepath.Rel(root, dir); err == nil {
			paths = append(paths, rel)
		}
	}
	changed := gitOutput(ctx, root, append([]string{"status", "--porcelain", "--"}, paths...)...)
	if changed == "" {
		return "commit " + head + ", no uncommitted changes in the controller's sources"
	}
	files := strings.Split(changed, "\n")
	for i, f := range files {
		files[i] = strings.TrimSpace(f)
	}
	return fmt.Sprintf("commit %s plus %d uncommitted change(s) in the controller's sources: %s", head, len(files), strings.Join(files, "; "))
}

func gitOutput(ctx context.Context, dir string, args ...string) string {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// startController runs bin against kubeconfig, logging to dir/claimwarden.log.
func startController(bin, kubeconfig, dir string) (*controllerProc, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	metricsAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	healthAddr := "127.0.0.1:" + strconv.Itoa(ports[1])
	logPath := filepath.Join(dir, "claimwarden.log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// The child has its own copy of the descriptor.
	defer f.Close()
	args := []string{"run",
		"--kubeconfig", kubeconfig,
		"--leader-election=false",
		"--metrics-addr", metricsAddr,
		"--health-addr", healthAddr,
		"--log-format", "json",
	}
	fmt.Fprintf(f, "# %s %s\n", bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = controllerEnv()
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	p := &controllerProc{
		cmd:        cmd,
		log:        logPath,
		metricsURL: "http://" + metricsAddr + "/metrics",
		readyURL:   "http://" + healthAddr + "/readyz",
		done:       make(chan struct{}),
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// controllerEnv is our environment without KUBECONFIG (the flag says which
// cluster) and without CLAIMWARDEN_* variables, which the controller reads
// as configuration and rejects when unknown (CLAIMWARDEN_TESTENV, for one).
func controllerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "CLAIMWARDEN_") {
			env = append(env, kv)
		}
	}
	return env
}

func (p *controllerProc) pid() int { return p.cmd.Process.Pid }

// exited returns an error once the controller has died, with its log tail.
func (p *controllerProc) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("the controller exited (%v); log %s:\n%s", p.err, p.log, tailFile(p.log, 20))
	default:
		return nil
	}
}

// waitReady polls /readyz until it answers 200.
func (p *controllerProc) waitReady(ctx context.Context, timeout time.Duration) error {
	return poll(ctx, 100*time.Millisecond, timeout, true, "the controller's /readyz", func(ctx context.Context) (bool, error) {
		if err := p.exited(); err != nil {
			return false, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.readyURL, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil // not listening yet
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// stop sends SIGTERM and waits for a clean exit, SIGKILL after grace. It
// reports an exit other than the clean one the controller makes on SIGTERM.
func (p *controllerProc) stop(grace time.Duration) error {
	if err := p.exited(); err != nil {
		return fmt.Errorf("crashed before the end of the run: %w", err)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("the controller exited with %v on SIGTERM; log %s", p.err, p.log)
		}
		return nil
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("the controller did not stop within %s of SIGTERM; killed", grace)
	}
}

// memory is the controller's memory as the kernel accounts it.
type memory struct {
	// RSSKiB is VmRSS now; HWMKiB is VmHWM, the peak RSS since start.
	RSSKiB, HWMKiB int64
}

// readMemory reads VmRSS and VmHWM from /proc/<pid>/status (Linux only).
func (p *controllerProc) readMemory() (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text()) // "VmRSS:	  81234 kB"
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			m.RSSKiB, _ = strconv.ParseInt(fields[1], 10, 64)
		case "VmHWM:":
			m.HWMKiB, _ = strconv.ParseInt(fields[1], 10, 64)
		}
	}
	if m.HWMKiB == 0 {
		return m, fmt.Errorf("no VmHWM in /proc/%d/status", p.pid())
	}
	return m, sc.Err()
}

// sampleMemory records the largest VmRSS every interval until ctx ends.
// VmHWM already is the kernel's exact peak; the samples show whether the peak
// belongs to a phase (start-up, setup, bump) or to steady growth.
func (p *controllerProc) sampleMemory(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if m, err := p.readMemory(); err == nil {
			p.mu.Lock()
			p.peakRSS = max(p.peakRSS, m.RSSKiB)
			p.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-p.done:
			return
		case <-tick.C:
		}
	}
}

func (p *controllerProc) sampledPeakRSS() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakRSS
}

// freePorts returns n distinct free loopback ports (held open together so
// they differ; another program could still take one before the controller
// binds it, which then fails fast through exited()).
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tailFile returns the last n lines of a file, for error messages.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
