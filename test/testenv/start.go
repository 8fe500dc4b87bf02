package testenv

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// start brings the components up in dependency order: etcd, kube-apiserver, then its
// clients, which start together so their start-up overlaps with the waits.
func (e *Env) start(ctx context.Context) (err error) {
	if e.pki, err = newPKI(filepath.Join(e.Dir, "pki")); err != nil {
		return err
	}
	if err := e.httpClients(); err != nil {
		return err
	}
	ports, err := FreePorts(6)
	if err != nil {
		return err
	}
	if e.etcd, err = e.startEtcd(ports[0], ports[1], false); err != nil {
		return err
	}
	if err := e.poll(ctx, e.etcd, e.etcdReady); err != nil {
		return err
	}
	if e.apiserver, err = e.startAPIServer(ports[2]); err != nil {
		return err
	}
	if err := e.writeAdminConfig(); err != nil {
		return err
	}
	if err := e.poll(ctx, e.apiserver, e.apiServerReady); err != nil {
		return err
	}

	// The clients start together; the waits below then overlap with their start-up.
	var kcm, sched, kwok *Process
	if e.opts.Controllers {
		if kcm, err = e.startControllerManager(ports[3]); err != nil {
			return err
		}
		e.clients = append(e.clients, kcm)
		if sched, err = e.startScheduler(ports[4]); err != nil {
			return err
		}
		e.clients = append(e.clients, sched)
	}
	if e.opts.Kwok {
		if kwok, err = e.startKwok(ports[5]); err != nil {
			return err
		}
		e.clients = append(e.clients, kwok)
	}
	if len(e.opts.CRDDirs) > 0 {
		deadline, _ := ctx.Deadline()
		if _, err := envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{
			Paths: e.opts.CRDDirs, ErrorIfPathMissing: true, MaxTime: time.Until(deadline),
		}); err != nil {
			return fmt.Errorf("install CRDs from %v: %w", e.opts.CRDDirs, err)
		}
	}
	if kcm != nil {
		if err := e.poll(ctx, kcm, e.healthz(ports[3])); err != nil {
			return err
		}
		if err := e.poll(ctx, sched, e.healthz(ports[4])); err != nil {
			return err
		}
	}
	if kwok != nil {
		c, err := kubernetes.NewForConfig(e.Config)
		if err != nil {
			return err
		}
		if err := createKwokNode(ctx, c); err != nil {
			return fmt.Errorf("create kwok node: %w", err)
		}
		e.NodeName = kwokNodeName
		if err := e.poll(ctx, kwok, func(ctx context.Context) error { return nodeSchedulable(ctx, c) }); err != nil {
			return err
		}
	}
	return nil
}

// poll waits for p to be ready (see Poll), watching every component.
func (e *Env) poll(ctx context.Context, p *Process, check func(context.Context) error) error {
	return Poll(ctx, p, p.name, e.exited, check)
}

// exited reports the first component that exited.
func (e *Env) exited() error {
	for _, q := range e.Processes() {
		if err := q.Exited(); err != nil {
			return err
		}
	}
	return nil
}

// Poll calls check every 100 ms until it succeeds, exited reports a process
// gone (returned at once: its error carries its log), or ctx ends (reported
// with check's last error and the tail of p's log; what names the wait).
// Harnesses that start servers (Flux, Argo CD) wait for them with it.
func Poll(ctx context.Context, p *Process, what string, exited func() error, check func(context.Context) error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := exited(); err != nil {
			return err
		}
		last := check(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %v); log %s:\n%s", what, ctx.Err(), last, p.log, TailFile(p.log, 20))
		case <-tick.C:
		}
	}
}

// Processes lists the running components in start order (the scale run
// reads their CPU time from /proc).
func (e *Env) Processes() []*Process {
	var ps []*Process
	e.procMu.Lock()
	defer e.procMu.Unlock()
	for _, p := range []*Process{e.etcd, e.apiserver} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return append(ps, e.clients...)
}

// startComponent runs <BinDir>/<name> in Dir with env added to its environment. It
// logs to <Dir>/<name>.log, appended to, since a caller's Dir may be reused.
func (e *Env) startComponent(name string, args []string, env ...string) (*Process, error) {
	return StartProcess(ProcessOptions{
		Name:      name,
		Binary:    filepath.Join(e.BinDir, name),
		Args:      args,
		Env:       env,
		Dir:       e.Dir,
		Log:       filepath.Join(e.Dir, name+".log"),
		AppendLog: true,
	})
}
