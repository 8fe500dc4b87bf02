package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"

	"github.com/claimwarden/claimwarden/test/benchkit"
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
// how long after the start the last did. The log is read every 200 ms,
// which is the figure's resolution.
func (in *instance) waitSynced(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var took time.Duration
	want := len(in.spokes) + 1
	err := benchkit.Poll(ctx, in.proc, 200*time.Millisecond, "every controller's caches to sync", func(context.Context) (bool, error) {
		b, err := os.ReadFile(in.proc.LogPath())
		if err != nil {
			return false, err
		}
		starting, workers, rollouts := benchkit.CountStarts(string(b))
		took = time.Since(in.started)
		return rollouts == want && workers == starting, nil
	})
	return took, err
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
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	prev := in.activity()
	return benchkit.PollAfter(ctx, in.proc, settle, "the controller to be quiet (no API request for "+settle.String()+")", func(context.Context) (bool, error) {
		now := in.activity()
		quiet := now == prev
		prev = now
		return quiet, nil
	})
}
