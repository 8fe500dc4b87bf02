package argoenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	// DefaultNamespace is where Argo CD keeps its settings and Applications.
	DefaultNamespace = "argocd"
	// AdminUser is Argo CD's built-in local admin account.
	AdminUser = "admin"

	// defaultAppResync is --app-resync: how often the controller compares every
	// Application again without being asked (Argo CD's default is 3 minutes).
	defaultAppResync = 10 * time.Second
	// defaultStartTimeout bounds Start when ctx has no deadline.
	defaultStartTimeout = 2 * time.Minute
	// stopGrace is how long each process gets between SIGTERM and SIGKILL.
	stopGrace = 10 * time.Second
)

// Options tune Start; the zero value is what most tests want.
type Options struct {
	// Dir holds the logs (<Dir>/<program>.log) and the programs' working data.
	// Empty means <env.Dir>/argocd, which testenv keeps when a test fails.
	Dir string
	// Namespace is Argo CD's namespace; empty means DefaultNamespace.
	Namespace string
	// AppResync is the controller's periodic refresh, in whole seconds (at least
	// one); zero means 10 s.
	AppResync time.Duration
	// ApplicationNamespaces turns on Argo CD's "applications in any namespace"
	// for these namespaces besides Namespace: argocd-server and the controller
	// get --application-namespaces, and Start creates the namespaces (if absent)
	// and the default AppProject with them as spec.sourceNamespaces. Names, not
	// the patterns Argo CD also takes: a pattern cannot be created. Empty keeps
	// every Application in Namespace.
	ApplicationNamespaces []string
}

// ArgoCD is a running Argo CD. Stop it before the control plane it runs against.
type ArgoCD struct {
	// ServerURL is argocd-server's plain-HTTP root, e.g. http://127.0.0.1:41234;
	// the REST API is under ServerURL + "/api/v1".
	ServerURL string
	// Namespace holds Argo CD's settings and its Applications.
	Namespace string
	// ApplicationNamespaces are the other namespaces Applications may be in
	// (Options.ApplicationNamespaces).
	ApplicationNamespaces []string
	// AdminPassword is the password of AdminUser.
	AdminPassword string
	// Dir holds the logs and the programs' data.
	Dir string
	// StartupTime is how long Start took.
	StartupTime time.Duration

	env   *testenv.Env
	kube  client.Client
	http  *http.Client
	procs []*testenv.Process // redis first, then the Argo CD programs

	tokenMu sync.Mutex
	token   string

	stopOnce sync.Once
	stopErr  error
}

// Start installs Argo CD's cluster objects into env, starts Redis and the three
// Argo CD programs, and returns once argocd-server accepts the admin login and the
// repo-server and the controller answer their health checks. ctx bounds Start only.
// On error everything started is stopped and the error carries the failing
// program's log.
func Start(ctx context.Context, env *testenv.Env, o Options) (_ *ArgoCD, err error) {
	began := time.Now()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.AppResync == 0 {
		o.AppResync = defaultAppResync
	}
	if o.Dir == "" {
		o.Dir = filepath.Join(env.Dir, "argocd")
	}
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return nil, err
	}
	bin, err := binaries()
	if err != nil {
		return nil, err
	}
	kube, err := client.New(env.Config, client.Options{})
	if err != nil {
		return nil, err
	}
	a := &ArgoCD{
		Namespace:             o.Namespace,
		ApplicationNamespaces: slices.Clone(o.ApplicationNamespaces),
		AdminPassword:         randomHex(16),
		Dir:                   o.Dir,
		env:                   env,
		kube:                  kube,
		// No proxy: the server is on loopback and a developer's HTTP_PROXY must not
		// see (or break) test traffic.
		http: &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 30 * time.Second},
	}
	defer func() {
		if err != nil {
			_ = a.Stop()
			err = fmt.Errorf("argoenv: start (logs in %s): %w", a.Dir, err)
		}
	}()
	if err := a.installClusterObjects(ctx, bin.crds); err != nil {
		return nil, err
	}
	if err := a.startProcesses(ctx, bin, o.AppResync); err != nil {
		return nil, err
	}
	a.StartupTime = time.Since(began)
	return a, nil
}

// StartT starts Argo CD with default Options for one test and stops it in
// t.Cleanup (before env, which was started earlier). A failed test gets the end
// of every Argo CD log in its output.
func StartT(t testing.TB, env *testenv.Env) *ArgoCD {
	t.Helper()
	return StartTWith(t, env, Options{})
}

// StartTWith is StartT with Options.
func StartTWith(t testing.TB, env *testenv.Env, o Options) *ArgoCD {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), defaultStartTimeout)
	defer cancel()
	a, err := Start(ctx, env, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("argoenv: logs in %s; last lines:\n%s", a.Dir, a.LogTails(30))
		}
		if err := a.Stop(); err != nil {
			t.Error(err)
		}
	})
	return a
}

// Stop stops the Argo CD programs together, then Redis, and reports any that had
// crashed before. It is idempotent.
func (a *ArgoCD) Stop() error {
	a.stopOnce.Do(func() {
		if len(a.procs) == 0 {
			return
		}
		argo := a.procs[1:]
		errs := make([]error, len(argo)+1)
		var wg sync.WaitGroup
		for i, p := range argo {
			wg.Go(func() { errs[i] = p.Stop(stopGrace) })
		}
		wg.Wait()
		errs[len(argo)] = a.procs[0].Stop(stopGrace)
		if err := errors.Join(errs...); err != nil {
			a.stopErr = fmt.Errorf("argoenv: stop: %w", err)
		}
	})
	return a.stopErr
}

// LogTails returns the last n lines of every program's log, for failure reports.
func (a *ArgoCD) LogTails(n int) string {
	var b strings.Builder
	for _, p := range a.procs {
		fmt.Fprintf(&b, "==> %s <==\n%s\n", p.LogPath(), testenv.TailFile(p.LogPath(), n))
	}
	return b.String()
}

// Exited is nil while Redis and the Argo CD programs run; otherwise it reports
// the first that has ended, with the end of its log. Waits of a test can call it
// to fail at once instead of at their deadline.
func (a *ArgoCD) Exited() error {
	for _, p := range a.procs {
		if err := p.Exited(); err != nil {
			return err
		}
	}
	return nil
}

// binPaths are what build.sh links into testenv.BinDir() for Argo CD.
type binPaths struct {
	dir     string // testenv.BinDir(): argocd itself, for GIT_ASKPASS=argocd, and helm (tools.sh)
	argocd  string // the one binary of all Argo CD programs
	crds    string // directory of the CRD YAML files
	hack    string // directory holding git-verify-wrapper.sh
	redisSv string // redis-server from the Debian package
}

func binaries() (binPaths, error) {
	dir, err := testenv.BinDir()
	if err != nil {
		return binPaths{}, err
	}
	b := binPaths{
		dir:    dir,
		argocd: filepath.Join(dir, "argocd"),
		crds:   filepath.Join(dir, "argocd-crds"),
		hack:   filepath.Join(dir, "argocd-hack"),
	}
	// The repo-server runs "helm" from its PATH (dir) for Helm sources; without
	// it they fail to render only once a test syncs one, so it is checked here.
	for _, p := range []string{b.argocd, filepath.Join(dir, "helm"), b.crds, filepath.Join(b.hack, "git-verify-wrapper.sh")} {
		if _, err := os.Stat(p); err != nil {
			return binPaths{}, fmt.Errorf("argoenv: missing %s: run `make testenv` (or set %s)", p, testenv.BinDirEnv)
		}
	}
	if b.redisSv, err = lookRedis(); err != nil {
		return binPaths{}, err
	}
	return b, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error (it crashes instead)
	return hex.EncodeToString(b)
}
