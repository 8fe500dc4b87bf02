package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// instance is claimwarden on the hub with its simulated spokes.
type instance struct {
	proc    *controllerproc.Process
	hub     *proxy
	spokes  []*proxy
	started time.Time
}

// startInstance runs the claimwarden binary on the hub with n simulated
// spokes (n proxies to the one spoke control plane, each registered by a
// cluster Secret), managing the StatefulSets selector matches. The
// returned function stops it and its proxies; it is set even on error.
func (b *bench) startInstance(ctx context.Context, name string, n int, selector string) (*instance, func() error, error) {
	in := &instance{}
	stop := func() error {
		var err error
		if in.proc != nil {
			err = in.proc.Shutdown(30 * time.Second)
		}
		for _, p := range append(in.spokes, in.hub) {
			if p != nil {
				p.close()
			}
		}
		return err
	}
	var err error
	if in.hub, err = startProxy(b.hub.account); err != nil {
		return nil, stop, err
	}
	for range n {
		p, err := startProxy(b.spoke.account)
		if err != nil {
			return nil, stop, err
		}
		in.spokes = append(in.spokes, p)
	}
	clusters, err := registerSpokes(ctx, b.hub.c, in.spokes, b.spoke.account.BearerToken)
	if err != nil {
		return nil, stop, err
	}
	config := filepath.Join(b.dir, name+".yaml")
	if err := writeConfig(config, selector, clusters); err != nil {
		return nil, stop, err
	}
	kubeconfig := filepath.Join(b.dir, name+".kubeconfig")
	err = testenv.WriteKubeconfig(kubeconfig, &rest.Config{
		Host:            in.hub.URL(),
		TLSClientConfig: rest.TLSClientConfig{CAData: in.hub.caPEM},
		BearerToken:     b.hub.account.BearerToken,
	})
	if err != nil {
		return nil, stop, err
	}
	in.started = time.Now()
	in.proc, err = controllerproc.Start(controllerproc.Options{
		Name:       "claimwarden (" + name + ")",
		Binary:     b.bin,
		Kubeconfig: kubeconfig,
		Log:        filepath.Join(b.dir, name+".log"),
		LogFormat:  "json",
		Metrics:    true,
		ExtraArgs:  []string{"--config", config},
	})
	if err != nil {
		return nil, stop, err
	}
	if err := in.proc.WaitReady(ctx, 2*time.Minute); err != nil {
		return nil, stop, err
	}
	return in, stop, nil
}

// waitSynced waits until every rollout controller (the hub's and one per
// spoke) and every other controller has synced its caches, and returns
// how long after the start the last did. controller-runtime logs
// "Starting workers" once a controller's caches synced; the log is read
// every 200 ms, which is the figure's resolution.
func (in *instance) waitSynced(ctx context.Context) (time.Duration, error) {
	var took time.Duration
	want := len(in.spokes) + 1
	err := in.poll(ctx, 200*time.Millisecond, 5*time.Minute, "every controller's caches to sync", func() (bool, error) {
		b, err := os.ReadFile(in.proc.LogPath())
		if err != nil {
			return false, err
		}
		starting, workers, rollouts := countStarts(string(b))
		took = time.Since(in.started)
		return rollouts == want && workers == starting, nil
	})
	return took, err
}

// countStarts counts, in a JSON log, the controllers that started their
// watches, those whose workers started (caches synced), and, of those,
// the rollout controllers.
func countStarts(log string) (starting, workers, rollouts int) {
	for line := range strings.Lines(log) {
		switch {
		case strings.Contains(line, `"msg":"Starting Controller"`):
			starting++
		case strings.Contains(line, `"msg":"Starting workers"`):
			workers++
			if strings.Contains(line, `"controller":"volumeclaimrollout"`) || strings.Contains(line, `"controller":"volumeclaimrollout-`) {
				rollouts++
			}
		}
	}
	return starting, workers, rollouts
}

// activity is the API requests (watches and /version left out) the
// controller sent to every cluster so far.
func (in *instance) activity() int {
	n := in.hub.counts().Requests
	for _, p := range in.spokes {
		n += p.counts().Requests
	}
	return n
}

// waitQuiet waits until no API request reaches any cluster for settle,
// an observable end of the start-up rather than a guess at its length.
func (in *instance) waitQuiet(ctx context.Context, settle, timeout time.Duration) error {
	prev := in.activity()
	return in.pollAfter(ctx, settle, timeout, "the controller to be quiet (no API request for "+settle.String()+")", func() (bool, error) {
		now := in.activity()
		quiet := now == prev
		prev = now
		return quiet, nil
	})
}

// observe lets d pass while the controller stays alive: a measurement
// window, not a wait for something to happen.
func (in *instance) observe(ctx context.Context, d time.Duration) error {
	end := time.NewTimer(d)
	defer end.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-in.proc.Done():
		return in.proc.Exited()
	case <-end.C:
		return nil
	}
}

// poll calls check at once and then every interval until it returns true
// or an error, the controller exits, or timeout passes.
func (in *instance) poll(ctx context.Context, interval, timeout time.Duration, what string, check func() (bool, error)) error {
	return in.pollFrom(ctx, true, interval, timeout, what, check)
}

// pollAfter is poll without the immediate first call.
func (in *instance) pollAfter(ctx context.Context, interval, timeout time.Duration, what string, check func() (bool, error)) error {
	return in.pollFrom(ctx, false, interval, timeout, what, check)
}

func (in *instance) pollFrom(ctx context.Context, immediate bool, interval, timeout time.Duration, what string, check func() (bool, error)) error {
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, immediate, func(context.Context) (bool, error) {
		if err := in.proc.Exited(); err != nil {
			return false, err
		}
		return check()
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}

// buildController compiles ./cmd/claimwarden from the module root into
// dir, so the run measures the source it is run from.
func buildController(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "claimwarden")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/claimwarden")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", errors.Join(fmt.Errorf("go build ./cmd/claimwarden: %w", err), errors.New(string(out)))
	}
	return bin, nil
}
