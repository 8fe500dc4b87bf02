package fluxenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// Options say how Start runs Flux; the zero value is fine.
type Options struct {
	// Namespace is the runtime namespace (RUNTIME_NAMESPACE), created if missing;
	// default "flux-system". The controllers watch every namespace regardless.
	Namespace string
	// Dir holds the logs (<Dir>/source-controller.log, kustomize-controller.log,
	// helm-controller.log)
	// and the source-controller's artifact storage; default <env.Dir>/flux-<Namespace>,
	// so the logs are kept (or removed) with the control plane's.
	Dir string
	// LogLevel is the controllers' --log-level: "info" (default), "debug" or "trace".
	LogLevel string
	// WatchLabelSelector is the controllers' --watch-label-selector: with
	// ShardLabel, it runs several Flux instances on one control plane, each
	// reconciling its own objects (Flux's sharding). Empty: every object.
	WatchLabelSelector string
	// KustomizeArgs and HelmArgs are extra flags of the kustomize- and
	// helm-controller, such as the multi-tenancy lockdown's
	// --no-cross-namespace-refs=true and --default-service-account.
	KustomizeArgs, HelmArgs []string
}

// ShardLabel is the label Flux's sharding selects objects by: an instance
// started with WatchLabelSelector ShardLabel+"=name" reconciles the objects
// labelled so, and one with "!"+ShardLabel the others.
const ShardLabel = "sharding.fluxcd.io/key"

// Flux is a running source-, kustomize- and helm-controller. Stop it when done.
type Flux struct {
	Source, Kustomize, Helm *testenv.Process
	// Namespace is the runtime namespace.
	Namespace string
	// StorageAddr is host:port of the source-controller's artifact server, which
	// serves what it fetched to the kustomize- and helm-controller (and to anyone else).
	StorageAddr string
	// Dir holds the logs and the artifact storage.
	Dir string
	// StartupTime is how long Start took, CRD installation included.
	StartupTime time.Duration

	stopOnce sync.Once
	stopErr  error
}

const (
	// defaultStartTimeout bounds Start when ctx has no deadline. The controllers
	// are healthy within seconds; a minute means something is wrong.
	defaultStartTimeout = time.Minute
	// testStartTimeout bounds StartT: CI machines can be several times slower.
	testStartTimeout = 3 * time.Minute
	// stopGrace is how long a controller gets to exit on SIGTERM.
	stopGrace = 10 * time.Second
)

// Start installs the Flux CRDs, creates the runtime namespace and starts the
// three controllers out of cluster, as env's admin, and returns once each answers its
// readiness probe and the artifact server answers. ctx bounds Start only; the
// controllers run until Stop (or until the test binary dies). On error, whatever
// was started is stopped and the error carries the relevant log lines.
func Start(ctx context.Context, env *testenv.Env, o Options) (_ *Flux, err error) {
	began := time.Now()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	if o.Namespace == "" {
		o.Namespace = "flux-system"
	}
	if o.Dir == "" {
		o.Dir = filepath.Join(env.Dir, "flux-"+o.Namespace)
	}
	// Absolute: the controllers run in Dir, and --storage-path is under it.
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return nil, err
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if err := checkBinaries(env.BinDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := installCRDs(ctx, env); err != nil {
		return nil, err
	}
	if err := createNamespace(ctx, env, o.Namespace); err != nil {
		return nil, err
	}

	f := &Flux{Namespace: o.Namespace, Dir: o.Dir}
	defer func() {
		if err != nil {
			// The error already carries the failing controller's log.
			_ = f.Stop()
			err = fmt.Errorf("fluxenv: start (logs in %s): %w", f.Dir, err)
		}
	}()
	if err := f.start(ctx, env, o); err != nil {
		return nil, err
	}
	f.StartupTime = time.Since(began)
	return f, nil
}

// StartT starts Flux on env for one test and stops it in t.Cleanup. Call it after
// testenv.StartT, so Flux stops before the control plane. A failed test gets the
// end of the controllers' logs in its output.
func StartT(t testing.TB, env *testenv.Env) *Flux {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testStartTimeout)
	defer cancel()
	f, err := Start(ctx, env, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("fluxenv: last log lines:\n%s", f.LogTails(40))
		}
		if err := f.Stop(); err != nil {
			t.Error(err)
		}
	})
	return f
}

// Stop stops the controllers together (SIGTERM, SIGKILL after a grace period).
// It reports a controller that had crashed before. Stop is idempotent.
func (f *Flux) Stop() error {
	f.stopOnce.Do(func() {
		var errs [3]error
		var wg sync.WaitGroup
		for i, p := range f.processes() {
			wg.Go(func() { errs[i] = p.Stop(stopGrace) })
		}
		wg.Wait()
		if err := errors.Join(errs[:]...); err != nil {
			f.stopErr = fmt.Errorf("fluxenv: stop: %w", err)
		}
	})
	return f.stopErr
}

// Exited returns nil while every controller runs, otherwise an error with the log
// of the one that exited: a test waiting on a Flux object can check it to fail at
// once rather than at its deadline.
func (f *Flux) Exited() error {
	for _, p := range f.processes() {
		if err := p.Exited(); err != nil {
			return err
		}
	}
	return nil
}

// LogTails returns the last n lines of the controllers' logs, for failure reports.
func (f *Flux) LogTails(n int) string {
	var b strings.Builder
	for _, p := range f.processes() {
		fmt.Fprintf(&b, "==> %s <==\n%s\n", p.LogPath(), testenv.TailFile(p.LogPath(), n))
	}
	return b.String()
}

// processes lists the controllers started so far.
func (f *Flux) processes() []*testenv.Process {
	var ps []*testenv.Process
	for _, p := range []*testenv.Process{f.Source, f.Kustomize, f.Helm} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}
