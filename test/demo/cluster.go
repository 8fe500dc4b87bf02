package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/argoenv"
	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/promenv"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	// controllerReadyTimeout bounds the wait for /readyz; the manager is ready
	// in about a second, so much longer means it is stuck.
	controllerReadyTimeout = 30 * time.Second
	// stopGrace is how long the controller and the simulator get to stop.
	stopGrace = 15 * time.Second
)

// cluster is everything the demo started, stopped in reverse order.
type cluster struct {
	env    *testenv.Env
	client client.WithWatch
	ctrl   *controllerproc.Process
	// gitea runs for the GitOps stories, flux and argo for theirs.
	gitea *gitea.Server
	flux  *fluxenv.Flux
	argo  *argoenv.ArgoCD
	// prom scrapes the simulator's volume statistics, which stats serves,
	// for the autoresize story.
	prom  *promenv.Server
	stats *http.Server

	sim       *storagesim.Simulator
	simCancel context.CancelFunc
	simDone   chan struct{} // closed when the simulator has returned simErr
	simErr    error
	simTold   bool // alive reported the simulator's end; stop need not repeat it
	simLog    *os.File
}

// startCluster starts the control plane, the storage simulator, what the
// story needs besides, and the controller. On error it stops whatever it had
// started.
func startCluster(ctx context.Context, o options, s story, out *printer) (_ *cluster, err error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("%w: run the demo from the repository", err)
	}
	bin, err := controllerproc.BinaryPath()
	if err != nil {
		return nil, err
	}

	out.step(s.starting)
	out.note("etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (one simulated Node)")
	env, err := testenv.Start(ctx, testenv.Options{Kwok: true, CRDDirs: []string{filepath.Join(root, "config", "crd", "bases")}})
	if err != nil {
		return nil, err
	}
	cl := &cluster{env: env}
	defer func() {
		if err != nil {
			failed := ctx.Err() == nil // an interrupt is not a failure worth logs
			err = errors.Join(err, cl.stop(failed))
			if failed {
				err = fmt.Errorf("%w\nlogs kept in %s", err, env.Dir)
			}
		}
	}()
	out.ok(fmt.Sprintf("control plane ready in %s (component logs in %s)", env.StartupTime.Round(100*time.Millisecond), env.Dir))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := fluxenv.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if cl.client, err = client.NewWithWatch(env.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}

	if err := cl.startSimulator(o.delay); err != nil {
		return nil, err
	}
	out.ok(fmt.Sprintf("storage simulator running: a resize takes %s (log %s)", o.delay, cl.simLog.Name()))

	var args []string
	if s.setup != nil {
		if args, err = s.setup(ctx, cl, out); err != nil {
			return nil, err
		}
	}
	if err := cl.startController(ctx, bin, args); err != nil {
		return nil, err
	}
	out.ok(fmt.Sprintf("claimwarden controller running as pid %d (log %s)", cl.ctrl.Pid(), cl.ctrl.LogPath()))
	return cl, nil
}

// startController runs the claimwarden binary against the cluster, as a user
// would run it outside a cluster, and waits for its /readyz. Its output goes to
// <env.Dir>/claimwarden.log.
func (cl *cluster) startController(ctx context.Context, bin string, args []string) error {
	c, err := controllerproc.Start(controllerproc.Options{
		Name:       "claimwarden controller",
		Binary:     bin,
		Kubeconfig: cl.env.Kubeconfig,
		Log:        filepath.Join(cl.env.Dir, "claimwarden.log"),
		LogFormat:  "console",
		ExtraArgs:  args,
	})
	if err != nil {
		return err
	}
	// From here stop stops it, also when it does not become ready.
	cl.ctrl = c
	return c.WaitReady(ctx, controllerReadyTimeout)
}

// startSimulator runs the storage simulator in this process. Its logs (and
// client-go's) go to a file so they do not interleave with the story.
func (cl *cluster) startSimulator(delay time.Duration) error {
	f, err := os.Create(filepath.Join(cl.env.Dir, "storagesim.log"))
	if err != nil {
		return err
	}
	cl.simLog = f
	logger := zap.New(zap.WriteTo(f), zap.UseDevMode(true))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)

	sim := &storagesim.Simulator{Delay: delay}
	if delay == 0 {
		sim.Delay = -1 // the simulator's zero means its default; -delay 0 means instant
	}
	cl.sim = sim
	ctx, cancel := context.WithCancel(context.Background())
	cl.simCancel, cl.simDone = cancel, make(chan struct{})
	go func() {
		cl.simErr = sim.Start(ctx, cl.env.Config)
		close(cl.simDone)
	}()
	return nil
}

// alive returns an error once the controller, Flux, Argo CD, Prometheus or the simulator has
// stopped on its own, so that waits fail at once with the reason instead of at
// their deadline. (A Gitea that died fails the next request to it.)
func (cl *cluster) alive() error {
	if err := cl.ctrl.Exited(); err != nil {
		return err
	}
	if cl.flux != nil {
		if err := cl.flux.Exited(); err != nil {
			return err
		}
	}
	if cl.argo != nil {
		if err := cl.argo.Exited(); err != nil {
			return err
		}
	}
	if cl.prom != nil {
		if err := cl.prom.Exited(); err != nil {
			return err
		}
	}
	select {
	case <-cl.simDone:
		cl.simTold = true
		return fmt.Errorf("storage simulator stopped: %v (log %s)", cl.simErr, cl.simLog.Name())
	default:
		return nil
	}
}

// stop stops the controller, then Prometheus and the volume statistics it
// scrapes, then Flux or Argo CD and Gitea, then the simulator, then
// the control plane, so that nothing is left talking to an API server that is
// gone. keepLogs keeps the environment's directory (after a failure).
func (cl *cluster) stop(keepLogs bool) error {
	var errs []error
	if cl.ctrl != nil {
		errs = append(errs, cl.ctrl.Stop(stopGrace))
	}
	if cl.prom != nil {
		errs = append(errs, cl.prom.Stop())
	}
	if cl.stats != nil {
		errs = append(errs, cl.stats.Close())
	}
	if cl.flux != nil {
		errs = append(errs, cl.flux.Stop())
	}
	if cl.argo != nil {
		errs = append(errs, cl.argo.Stop())
	}
	if cl.gitea != nil {
		errs = append(errs, cl.gitea.Stop())
	}
	if cl.simCancel != nil {
		cl.simCancel()
		select {
		case <-cl.simDone:
			if !cl.simTold {
				errs = append(errs, cl.simErr)
			}
		case <-time.After(stopGrace):
			errs = append(errs, fmt.Errorf("storage simulator did not stop within %s", stopGrace))
		}
		cl.simLog.Close()
	}
	if keepLogs {
		cl.env.KeepDir = true
	}
	errs = append(errs, cl.env.Stop())
	return errors.Join(errs...)
}

// components names what stop stops, for the story's last line.
func (cl *cluster) components() string {
	parts := "the controller, "
	if cl.prom != nil {
		parts += "Prometheus, "
	}
	switch {
	case cl.flux != nil:
		parts += "Flux, "
	case cl.argo != nil:
		parts += "Argo CD, "
	}
	if cl.gitea != nil {
		parts += "Gitea, "
	}
	return parts + "the storage simulator and the control plane"
}
