package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	reportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	// The identity config/rbac creates and binds.
	controllerNamespace = "claimwarden-system"
	serviceAccount      = "claimwarden"
	saUser              = "system:serviceaccount:" + controllerNamespace + ":" + serviceAccount

	// class is the StorageClass of every test StatefulSet, served by the simulator.
	class = "sim"
	// simDelay is the simulated resize time. It must be long enough for a test
	// to see a patched claim and act (SIGKILL, SIGTERM, scrape metrics) before
	// the controller could patch the next one, which it does only once the
	// previous claim has reached its capacity: 3 s is ~30 polls.
	simDelay = 3 * time.Second

	// timeout bounds each wait; a rollout of 3 claims takes 3 × simDelay, plus
	// up to a lease duration (15 s) after a SIGKILL.
	timeout = 2 * time.Minute
)

// saGroups are the groups a token of the ServiceAccount authenticates with,
// which the SubjectAccessReviews of the permission tests name.
var saGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + controllerNamespace, "system:authenticated"}

var (
	env    *testenv.Env
	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := fluxenv.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := reportsv1alpha1.Install(scheme); err != nil {
		panic(err)
	}
	reports, err := testenv.ModuleFile("github.com/openreports/reports-api", "config/crd/openreports.io_reports.yaml")
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.RunTests(m, testenv.Options{
		Kwok:    true,
		CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases"), reports},
		Audit:   true,
	}, &env))
}

// cluster is what every test shares: the admin client, the controller's
// kubeconfig and binary, and the storage simulator (one per test binary:
// they all serve the same provisioner).
type cluster struct {
	admin      client.Client
	kubeconfig string // the controller's: admin credentials impersonating the ServiceAccount
	binary     string
	// volumeStats is the host:port of the simulator's kubelet-style
	// volume statistics (/metrics), which Prometheus scrapes.
	volumeStats string
}

var (
	setupOnce sync.Once
	shared    *cluster
	setupErr  error
)

// started installs config/rbac and the storage class and starts the storage
// simulator, once; every test calls it first. Its cleanup, the test's last,
// checks what the test produced for the run's secrets (checkNoLeaks).
func started(t *testing.T) *cluster {
	t.Helper()
	setupOnce.Do(func() { shared, setupErr = setup(context.Background()) })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	t.Cleanup(func() { checkNoLeaks(t, shared.admin) })
	return shared
}

func setup(ctx context.Context) (*cluster, error) {
	bin, err := controllerBinary()
	if err != nil {
		return nil, err
	}
	// The simulator's own logs go to a file kept with the control plane's;
	// without a logger controller-runtime complains on stderr.
	logs, err := os.Create(filepath.Join(env.Dir, "storagesim.log"))
	if err != nil {
		return nil, err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))

	admin, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	if err := installRBAC(ctx, admin, allComponents...); err != nil {
		return nil, err
	}
	if err := admin.Create(ctx, storagesim.StorageClass(class, true)); err != nil {
		return nil, err
	}
	sim := &storagesim.Simulator{Delay: simDelay}
	go func() {
		// The simulator runs until the test binary exits; it stopping earlier
		// would show as rollouts that never finish.
		if err := sim.Start(context.Background(), env.Config); err != nil {
			fmt.Fprintln(os.Stderr, "storagesim:", err)
		}
	}()
	stats, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		// Served until the test binary exits, like the simulator.
		srv := &http.Server{Handler: sim.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second}
		if err := srv.Serve(stats); err != nil {
			fmt.Fprintln(os.Stderr, "storagesim metrics:", err)
		}
	}()
	kubeconfig := filepath.Join(env.Dir, "claimwarden.kubeconfig")
	if err := writeAccountKubeconfig(ctx, kubeconfig, serviceAccount); err != nil {
		return nil, err
	}
	return &cluster{admin: admin, kubeconfig: kubeconfig, binary: bin, volumeStats: stats.Addr().String()}, nil
}

// controllerBinary returns bin/claimwarden, where `make build` puts it.
// Testing a binary (not the packages) is the point of this package, so a
// missing one fails instead of being built behind the developer's back.
func controllerBinary() (string, error) {
	bin, err := controllerproc.BinaryPath()
	if err != nil {
		return "", fmt.Errorf("e2e: %w", err)
	}
	// Log which build runs: a stale binary tests stale code.
	version, err := controllerproc.Version(context.Background(), bin)
	if err != nil {
		return "", fmt.Errorf("e2e: %w", err)
	}
	fmt.Fprintf(os.Stderr, "e2e: testing %s (%s)\n", bin, version)
	return bin, nil
}

// writeAccountKubeconfig writes the kubeconfig of the ServiceAccount
// account of the controller's namespace: a token the API server issued for
// it, as in a Pod. That is how the tests run the binary outside a Pod yet
// with exactly the permissions of config/rbac, and authenticated the way a
// cluster authenticates it.
func writeAccountKubeconfig(ctx context.Context, path, account string) error {
	cfg, err := env.ServiceAccountConfig(ctx, controllerNamespace, account)
	if err != nil {
		return err
	}
	return testenv.WriteKubeconfig(path, cfg)
}
