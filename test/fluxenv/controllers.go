package fluxenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// The names build.sh links into bin/testenv.
const (
	sourceBin    = "source-controller"
	kustomizeBin = "kustomize-controller"
	helmBin      = "helm-controller"
	crdDir       = "flux-crds"
)

// checkBinaries fails with one message naming what is missing, so a checkout
// whose bin/testenv predates Flux gets "run `make testenv`".
func checkBinaries(bin string) error {
	var missing []string
	for _, name := range []string{sourceBin, kustomizeBin, helmBin, crdDir} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("fluxenv: missing %s in %s: run `make testenv` (or set %s)", strings.Join(missing, ", "), bin, testenv.BinDirEnv)
	}
	return nil
}

// commonFlags are the flags every controller takes: loopback-only endpoints, no
// leader election (one replica; it would also delay the start by a lease), no
// interval jitter (so a test's short intervals are what it gets), and short
// retry back-off and dependency requeue so failures are retried within seconds;
// and the shard's label selector, if any.
func commonFlags(o Options, metricsPort, healthPort int) []string {
	var selector []string
	if o.WatchLabelSelector != "" {
		selector = []string{"--watch-label-selector", o.WatchLabelSelector}
	}
	return append(selector,
		"--metrics-addr", loopback(metricsPort),
		"--health-addr", loopback(healthPort),
		"--enable-leader-election=false",
		"--interval-jitter-percentage", "0",
		"--max-retry-delay", "5s",
		"--requeue-dependency", "2s",
		"--log-encoding", "console",
		"--log-level", o.LogLevel,
	)
}

func loopback(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// start runs the controllers, then waits for all: their start-ups overlap.
func (f *Flux) start(ctx context.Context, env *testenv.Env, o Options) error {
	ports, err := testenv.FreePorts(7)
	if err != nil {
		return err
	}
	storage := filepath.Join(o.Dir, "storage")
	// The source-controller refuses to start without its storage directory.
	if err := os.MkdirAll(storage, 0o755); err != nil {
		return err
	}
	f.StorageAddr = loopback(ports[2])
	// Out of cluster the controllers read KUBECONFIG (they have no --kubeconfig
	// flag); RUNTIME_NAMESPACE is where they would run in a cluster.
	procEnv := []string{"KUBECONFIG=" + env.Kubeconfig, "RUNTIME_NAMESPACE=" + o.Namespace}

	if f.Source, err = testenv.StartProcess(testenv.ProcessOptions{
		Name:   sourceBin,
		Binary: filepath.Join(env.BinDir, sourceBin),
		Args: append(commonFlags(o, ports[0], ports[1]),
			"--storage-path", storage,
			// The artifact URLs in GitRepository status use the advertised address,
			// and the kustomize-controller downloads from it.
			"--storage-addr", f.StorageAddr,
			"--storage-adv-addr", f.StorageAddr,
		),
		Env: procEnv,
		Dir: o.Dir,
		Log: filepath.Join(o.Dir, sourceBin+".log"),
	}); err != nil {
		return err
	}
	if f.Kustomize, err = testenv.StartProcess(testenv.ProcessOptions{
		Name:   kustomizeBin,
		Binary: filepath.Join(env.BinDir, kustomizeBin),
		// Few HTTP retries: the artifact server is on loopback, and the default 9
		// would hide a broken one behind minutes of back-off.
		Args: append(append(commonFlags(o, ports[3], ports[4]), "--http-retry", "2"), o.KustomizeArgs...),
		Env:  procEnv,
		Dir:  o.Dir,
		Log:  filepath.Join(o.Dir, kustomizeBin+".log"),
	}); err != nil {
		return err
	}
	if f.Helm, err = testenv.StartProcess(testenv.ProcessOptions{
		Name:   helmBin,
		Binary: filepath.Join(env.BinDir, helmBin),
		// It downloads chart artifacts from the same loopback server.
		Args: append(append(commonFlags(o, ports[5], ports[6]), "--http-retry", "2"), o.HelmArgs...),
		Env:  procEnv,
		Dir:  o.Dir,
		Log:  filepath.Join(o.Dir, helmBin+".log"),
	}); err != nil {
		return err
	}

	checks := []struct {
		p     *testenv.Process
		what  string
		check func(context.Context) error
	}{
		{f.Source, "readyz", testenv.HTTPOK(probeClient, "http://"+loopback(ports[1])+"/readyz")},
		// The artifact server starts only once the manager runs as leader (always,
		// here); it answers / with a directory listing.
		{f.Source, "artifact server", testenv.HTTPOK(probeClient, "http://"+f.StorageAddr+"/")},
		{f.Kustomize, "readyz", testenv.HTTPOK(probeClient, "http://"+loopback(ports[4])+"/readyz")},
		{f.Helm, "readyz", testenv.HTTPOK(probeClient, "http://"+loopback(ports[6])+"/readyz")},
	}
	for _, c := range checks {
		if err := testenv.Poll(ctx, c.p, c.p.Name()+" "+c.what, f.Exited, c.check); err != nil {
			return err
		}
	}
	return nil
}

// probeClient has no proxy: the endpoints are on loopback, and a developer's
// HTTP_PROXY must not see (or break) them.
var probeClient = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}
