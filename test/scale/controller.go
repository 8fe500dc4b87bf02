package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/claimwarden/claimwarden/test/controllerproc"
)

// controllerProc is the claimwarden binary running as its own process, as it
// does in a cluster: its memory and its client metrics are its own.
type controllerProc struct {
	*controllerproc.Process
	metricsURL string

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
	version, err := controllerproc.Version(ctx, bin)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return version
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

// startController runs bin against kubeconfig with args, logging to dir/claimwarden.log.
func startController(bin, kubeconfig, dir string, args ...string) (*controllerProc, error) {
	p, err := controllerproc.Start(controllerproc.Options{
		Name:       "the controller",
		Binary:     bin,
		Kubeconfig: kubeconfig,
		Log:        filepath.Join(dir, "claimwarden.log"),
		LogFormat:  "json",
		Metrics:    true,
		ExtraArgs:  args,
	})
	if err != nil {
		return nil, err
	}
	return &controllerProc{Process: p, metricsURL: "http://" + p.MetricsAddr + "/metrics"}, nil
}

// memory is the controller's memory as the kernel accounts it.
type memory struct {
	// RSSKiB is VmRSS now; HWMKiB is VmHWM, the peak RSS since start.
	RSSKiB, HWMKiB int64
}

// readMemory reads VmRSS and VmHWM from /proc/<pid>/status (Linux only).
func (p *controllerProc) readMemory() (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.Pid()))
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
		return m, fmt.Errorf("no VmHWM in /proc/%d/status", p.Pid())
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
		case <-p.Done():
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

// waitCachesSynced waits until every controller the process started has
// synced its caches, and returns how long after started the last one did.
// controller-runtime logs "Starting Controller" when a controller starts its
// watches and "Starting workers" once their caches synced; the log is read
// every 100 ms, which is the figure's resolution.
func (r *runner) waitCachesSynced(ctx context.Context, started time.Time) (float64, error) {
	var synced time.Time
	err := r.poll(ctx, 100*time.Millisecond, "the controller's caches to sync", func(context.Context) (bool, error) {
		b, err := os.ReadFile(r.ctrl.LogPath())
		if err != nil {
			return false, err
		}
		controllers, workers, rollouts := 0, 0, false
		for line := range strings.Lines(string(b)) {
			switch {
			case strings.Contains(line, `"msg":"Starting Controller"`):
				controllers++
			case strings.Contains(line, `"msg":"Starting workers"`):
				workers++
				rollouts = rollouts || strings.Contains(line, `"controller":"volumeclaimrollout"`)
			}
		}
		synced = time.Now()
		// The rollouts' controller too: the others may have synced before it
		// logged its start.
		return rollouts && workers == controllers, nil
	})
	return synced.Sub(started).Seconds(), err
}
