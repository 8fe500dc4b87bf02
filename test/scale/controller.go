package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/claimwarden/claimwarden/test/benchkit"
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

// sampleMemory records the largest VmRSS every interval until ctx ends.
// VmHWM already is the kernel's exact peak; the samples show whether the peak
// belongs to a phase (start-up, setup, bump) or to steady growth.
func (p *controllerProc) sampleMemory(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if m, err := benchkit.ReadMemory(p.Pid()); err == nil {
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
	err := benchkit.Poll(ctx, r.ctrl, 100*time.Millisecond, "the controller's caches to sync", func(context.Context) (bool, error) {
		b, err := os.ReadFile(r.ctrl.LogPath())
		if err != nil {
			return false, err
		}
		controllers, workers, rollouts := benchkit.CountStarts(string(b))
		synced = time.Now()
		// The rollouts' controller too: the others may have synced before it
		// logged its start.
		return rollouts > 0 && workers == controllers, nil
	})
	return synced.Sub(started).Seconds(), err
}
