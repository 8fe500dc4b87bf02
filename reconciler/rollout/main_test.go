package rollout_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// The storage classes every test may use, all served by the storage simulator.
const (
	classExpandable = "sim"       // allowVolumeExpansion: true
	classOther      = "sim-other" // allowVolumeExpansion: true, another class
	classFixed      = "sim-fixed" // allowVolumeExpansion: false
	classUnbound    = "sim-none"  // expandable, but nothing provisions it: claims stay Pending
	simDelay        = 750 * time.Millisecond
	maxClaims       = 8
	// policyNamespace holds the ConfigMaps the engine reads policies from.
	policyNamespace = "claimwarden-system"
)

var (
	env *testenv.Env
	k8s client.Client
	sim *storagesim.Simulator
	// engine holds the shipped policies plus those tests write into policyDir.
	engine    *policies.Engine
	policyDir string
	// proposals is where tests put GitOps proposals; statuses records the
	// commit statuses the controller reports.
	proposals = proposal.NewStore()
	statuses  = &statusRecorder{}
	// converged counts the Converged outcomes the controller publishes.
	converged = &convergedCounter{}
	// journalKeyOf holds the key that seals the controller's journal.
	journalKeyOf = types.NamespacedName{Namespace: policyNamespace, Name: "claimwarden-journal-key"}
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunTests(m, testenv.Options{Kwok: true, CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}}, &env))
}

var (
	setupOnce sync.Once
	setupErr  error
	// controllerCache is the cache the controller under test reads.
	controllerCache cache.Cache
)

// started returns a client once the storage simulator and the controller under
// test run (started by the first test that needs them, in one manager).
func started(t *testing.T) client.Client {
	t.Helper()
	setupOnce.Do(func() { setupErr = setup(context.Background(), env) })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return k8s
}

func setup(ctx context.Context, e *testenv.Env) error {
	logs, err := os.Create(filepath.Join(e.Dir, "controller.log"))
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	if k8s, err = client.New(e.Config, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	for _, sc := range []struct {
		name   string
		expand bool
	}{{classExpandable, true}, {classOther, true}, {classFixed, false}} {
		if err := k8s.Create(ctx, storagesim.StorageClass(sc.name, sc.expand)); err != nil {
			return err
		}
	}
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// The controller's reads and writes, for the tests that count them.
		NewClient: controllerClient.newClient,
		// As cmd/claimwarden/app caches: without managedFields.
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		return err
	}
	sim = &storagesim.Simulator{Delay: simDelay}
	controllerCache = mgr.GetCache()
	if err := sim.SetupWithManager(mgr); err != nil {
		return err
	}
	unbound := storagesim.StorageClass(classUnbound, true)
	unbound.Provisioner = "none.claimwarden.dev"
	if err := k8s.Create(ctx, unbound); err != nil {
		return err
	}
	if policyDir, err = os.MkdirTemp(e.Dir, "policies"); err != nil {
		return err
	}
	engine, err = policies.New(ctx, policies.Options{
		Dirs:         []string{policyDir},
		PollInterval: 200 * time.Millisecond,
		Logger:       ctrl.Log.WithName("policies"),
	})
	if err != nil {
		return err
	}
	if err := fixtures.Namespace(ctx, k8s, policyNamespace); err != nil {
		return err
	}
	if err := engine.SetupConfigMapSource(mgr, policyNamespace); err != nil {
		return err
	}
	statusSink, err := addStatusSink(mgr)
	if err != nil {
		return err
	}
	if _, err := rollout.SetupWithManager(mgr, rollout.Options{
		MaxConcurrentPatches: 1,
		// Above every test's claims but one: a StatefulSet beyond the limit
		// is shown with few replicas, since kube-controller-manager itself
		// allocates per replica and would not survive 2147483647.
		MaxClaimsPerStatefulSet: maxClaims,
		RetryBaseDelay:          time.Second,
		RetryMaxDelay:           5 * time.Second,
		Policies:                engine,
		PolicyChanges:           engine.Changes(),
		Proposals:               proposals,
		// Answers kept briefly, so that a role granted within a test counts.
		Authority:        authority.NewReviews(mgr.GetClient(), 200*time.Millisecond),
		AuthorityRecheck: time.Second,
		Sinks:            []outcome.Sink{statusSink, converged, nudging},
		JournalKeySecret: journalKeyOf,
		// Those of a scoped controller are its own (see scopedController).
		LabelSelector: labels.NewSelector().Add(mustRequirement(scopedLabel, selection.DoesNotExist)),
	}); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return nil
}

// addStatusSink adds to mgr a commit-status sink that posts to the test's
// recording provider (statuses), retrying quickly.
func addStatusSink(mgr ctrl.Manager) (*commitstatus.CommitStatusSink, error) {
	sink := commitstatus.NewCommitStatusSink(commitstatus.CommitStatusSinkOptions{
		Reporter: commitstatus.ReporterOptions{
			Providers: func(githost.Repository) (commitstatus.Provider, error) { return statuses, nil },
			BaseDelay: 100 * time.Millisecond,
		},
		Records: rollout.NewWriter(mgr.GetClient(), mgr.GetAPIReader()),
	})
	return sink, mgr.Add(sink)
}
