package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Options selects what Start runs; the zero value is etcd and kube-apiserver only.
type Options struct {
	// Controllers starts kube-controller-manager (all default controllers:
	// statefulset, PV binder, garbage collector, service accounts...) and kube-scheduler.
	Controllers bool
	// Kwok starts kwok and creates one fake Node (NodeName) so Pods become Running and
	// Ready. Implies Controllers.
	Kwok bool
	// Dir holds logs (<Dir>/<component>.log, appended to), certificates and etcd data
	// (reset by Start). When empty a temporary directory is used and Stop removes it
	// (unless KeepDir is set).
	Dir string
	// CRDDirs are directories (or files) of CustomResourceDefinition YAML, such as
	// config/crd/bases, installed once the API server is ready; Start returns after
	// they are served. Relative paths are relative to the working directory, which
	// for a test is its package directory.
	CRDDirs []string
	// ClientQPS, when positive, is the client-side request rate (and half
	// the burst) of kube-controller-manager and kube-scheduler; zero keeps
	// the test default (100 and the scheduler's own 50). Runs that create
	// thousands of Pods and claims raise it so that setup is not throttled.
	ClientQPS int
	// Audit has the API server log every write to claims and StatefulSets
	// (AuditLog, AuditEvents): how often each object was written, and by
	// whom, read from the server rather than from the writer's own account.
	Audit bool
}

// Env is a running control plane. Stop it when done.
type Env struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file holding the same admin credentials,
	// for kubectl and for programs run by a test.
	Kubeconfig string
	// Dir holds logs, certificates and data.
	Dir string
	// BinDir is where the binaries came from.
	BinDir string
	// NodeName is the kwok Node's name ("" without Options.Kwok).
	NodeName string
	// KeepDir keeps a temporary Dir at Stop, e.g. to read the logs after a failure.
	// Start sets it when $TESTENV_KEEP is non-empty.
	KeepDir bool
	// StartupTime is how long Start took, for reports and for noticing regressions.
	StartupTime time.Duration

	opts            Options
	tempDir         bool
	pki             *pki
	etcdURL, apiURL string
	adminHTTP       *http.Client
	anonHTTP        *http.Client
	etcdPorts       [2]int // client, peer
	apiPort         int
	procMu          sync.Mutex // guards etcd and apiserver, which a restart replaces
	etcd, apiserver *Process
	clients         []*Process // kube-controller-manager, kube-scheduler, kwok
	stopOnce        sync.Once
	stopErr         error
}

// KeepEnv, when set to anything, keeps every temporary Dir for inspection.
const KeepEnv = "TESTENV_KEEP"

// defaultStartTimeout bounds Start when ctx has no deadline. A cold start takes
// seconds; a minute means something is wrong, and the error carries the log tail.
const defaultStartTimeout = 90 * time.Second

// Start runs the components o asks for and returns when they are all ready: the API
// server answers /readyz, kube-controller-manager and kube-scheduler answer /healthz,
// the kwok Node is Ready and untainted, and the CRDs are served. ctx bounds Start
// only; the processes run until Stop (or until the test binary dies). On error,
// everything started is stopped and the error includes the relevant log lines.
func Start(ctx context.Context, o Options) (*Env, error) {
	for attempt := 1; ; attempt++ {
		e, err := startOnce(ctx, o)
		// A free port can be taken by another process between FreePorts and the
		// bind (tests of other packages start servers at the same time); new
		// ports are then the cure.
		if err == nil || attempt == maxStartAttempts || !strings.Contains(err.Error(), "address already in use") {
			return e, err
		}
	}
}

// maxStartAttempts bounds the retries of Start after a lost port race.
const maxStartAttempts = 3

func startOnce(ctx context.Context, o Options) (_ *Env, err error) {
	began := time.Now()
	if o.Kwok {
		o.Controllers = true
	}
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	need := []string{"etcd", "kube-apiserver"}
	if o.Controllers {
		need = append(need, "kube-controller-manager", "kube-scheduler")
	}
	if o.Kwok {
		need = append(need, "kwok", stagesFile)
	}
	if err := checkBinaries(bin, need...); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}

	e := &Env{BinDir: bin, Dir: o.Dir, opts: o, KeepDir: os.Getenv(KeepEnv) != ""}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "claimwarden-testenv-"); err != nil {
			return nil, err
		}
		e.tempDir = true
	} else if e.Dir, err = filepath.Abs(e.Dir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			// The error already names the component that failed, with its log; what
			// Stop could add is that same crash again.
			_ = e.Stop()
			if e.tempDir && !e.KeepDir {
				err = fmt.Errorf("testenv: start: %w", err) // Dir is gone
			} else {
				err = fmt.Errorf("testenv: start (logs in %s): %w", e.Dir, err)
			}
		}
	}()
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := e.start(ctx); err != nil {
		return nil, err
	}
	e.StartupTime = time.Since(began)
	return e, nil
}

// Stop stops the clients of the API server first (kwok, kube-scheduler,
// kube-controller-manager, together), then kube-apiserver, then etcd: etcd going
// first leaves the API server retrying for minutes. Each gets SIGTERM, then SIGKILL
// after a grace period. Stop is idempotent and safe to call concurrently; it reports
// components that had crashed before it was called.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() { e.stopErr = e.stop() })
	return e.stopErr
}

func (e *Env) stop() error {
	errs := make([]error, len(e.clients)+2)
	var wg sync.WaitGroup
	for i, p := range e.clients {
		wg.Go(func() { errs[i] = p.Stop(10 * time.Second) })
	}
	wg.Wait()
	if e.apiserver != nil {
		errs[len(e.clients)] = e.apiserver.Stop(20 * time.Second)
	}
	if e.etcd != nil {
		errs[len(e.clients)+1] = e.etcd.Stop(10 * time.Second)
	}
	if e.tempDir && !e.KeepDir {
		errs = append(errs, os.RemoveAll(e.Dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("testenv: stop: %w", err)
	}
	return nil
}

// ConfigFor returns an admin configuration that impersonates user and groups, for
// RBAC tests. For a ServiceAccount user ("system:serviceaccount:<ns>:<name>") with no
// groups the API server adds system:serviceaccounts, system:serviceaccounts:<ns> and
// system:authenticated itself, exactly the identity the ServiceAccount's token has.
func (e *Env) ConfigFor(user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(e.Config)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return c
}

// LogTails returns the last n lines of every component's log, for failure reports.
func (e *Env) LogTails(n int) string {
	var b strings.Builder
	for _, p := range e.Processes() {
		fmt.Fprintf(&b, "==> %s <==\n%s\n", p.log, TailFile(p.log, n))
	}
	return b.String()
}
