package rollout_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
)

// scopedLabel on a StatefulSet hands it to the scoped controller of that
// name; the shared controller leaves it alone.
const scopedLabel = "claimwarden.test/controller"

var (
	scopedMu      sync.Mutex
	scopedStarted = map[string]error{}
)

// scopedController makes sure a rollout controller of its own (manager,
// policy engine with params, commit statuses into statuses) runs for the
// StatefulSets labelled scopedLabel=name: how a test runs the shipped
// policies with other parameters without changing them for every other
// test. Like the shared one, it runs until the test binary ends; options,
// when given, change its rollout.Options (the first call of a name decides).
func scopedController(t *testing.T, name string, params map[string]any, options ...func(*rollout.Options)) {
	t.Helper()
	scopedControllerWithCache(t, name, nil, params, options...)
}

// scopedControllerWithCache is scopedController whose manager serves reads
// from wrap(cache) when wrap is not nil: how a test makes the controller's
// cache lag.
func scopedControllerWithCache(t *testing.T, name string, wrap func(cache.Cache) cache.Cache, params map[string]any, options ...func(*rollout.Options)) {
	t.Helper()
	started(t)
	scopedMu.Lock()
	defer scopedMu.Unlock()
	err, ok := scopedStarted[name]
	if !ok {
		err = startScoped(context.Background(), name, wrap, params, options)
		scopedStarted[name] = err
	}
	if err != nil {
		t.Fatalf("scoped controller %s: %v", name, err)
	}
}

func startScoped(ctx context.Context, name string, wrap func(cache.Cache) cache.Cache, params map[string]any, options []func(*rollout.Options)) error {
	mgrOpts := ctrl.Options{
		Scheme:                 k8s.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Its controller has the shared one's name, in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		// Logged like the shared one's, in the namespaces of its tests.
		NewClient: controllerClient.newClient,
		Cache:     cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	}
	if wrap != nil {
		mgrOpts.NewCache = func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
			c, err := cache.New(config, opts)
			if err != nil {
				return nil, err
			}
			return wrap(c), nil
		}
	}
	mgr, err := ctrl.NewManager(env.Config, mgrOpts)
	if err != nil {
		return err
	}
	eng, err := policies.New(ctx, policies.Options{Params: params, PollInterval: -1, Logger: ctrl.Log.WithName("policies-" + name)})
	if err != nil {
		return err
	}
	statusSink, err := addStatusSink(mgr)
	if err != nil {
		return err
	}
	opts := rollout.Options{
		MaxConcurrentPatches: 1,
		RetryBaseDelay:       time.Second,
		RetryMaxDelay:        5 * time.Second,
		Policies:             eng,
		LabelSelector:        labels.NewSelector().Add(mustRequirement(scopedLabel, selection.Equals, name)),
		Sinks:                []outcome.Sink{statusSink},
		JournalKeySecret:     journalKeyOf,
	}
	for _, o := range options {
		o(&opts)
	}
	if _, err := rollout.SetupWithManager(mgr, opts); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "scoped manager", name+":", err)
		}
	}()
	return nil
}

// mustRequirement is a label requirement of constant parts.
func mustRequirement(key string, op selection.Operator, values ...string) labels.Requirement {
	r, err := labels.NewRequirement(key, op, values)
	if err != nil {
		panic(err)
	}
	return *r
}
