package argocd

import (
	"errors"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// WatchOptions configure the Application watcher.
type WatchOptions struct {
	// Namespaces limits the Applications watched; empty means all. Argo CD
	// keeps them in its own namespace unless apps-in-any-namespace is on.
	Namespaces []string
	// API reads desired StatefulSets and starts syncs; required.
	API *Client
	// Proposals receives the proposals; required.
	Proposals *proposal.Store
	// SyncManualApps starts a sync of Applications without automated sync
	// after a convergence; by default they are only refreshed.
	SyncManualApps bool
	// RetryBaseDelay and RetryMaxDelay bound the back-off while the Argo CD
	// API fails; defaults 5 s and 5 min.
	RetryBaseDelay, RetryMaxDelay time.Duration
}

// SetupWithManager registers the Application watcher with mgr. Applications
// are watched as unstructured objects: no Argo CD types are compiled in.
func SetupWithManager(mgr ctrl.Manager, o WatchOptions) error {
	if o.API == nil || o.Proposals == nil {
		return errors.New("argocd: WatchOptions.API and Proposals are required")
	}
	if o.RetryBaseDelay <= 0 {
		o.RetryBaseDelay = 5 * time.Second
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = 5 * time.Minute
	}
	r := &ApplicationReconciler{
		Client:         mgr.GetClient(),
		Reader:         mgr.GetAPIReader(),
		API:            o.API,
		Proposals:      o.Proposals,
		Recorder:       mgr.GetEventRecorder("claimwarden"),
		SyncManualApps: o.SyncManualApps,
	}
	inScope := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return len(o.Namespaces) == 0 || slices.Contains(o.Namespaces, obj.GetNamespace())
	})
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(ApplicationGVK)
	return ctrl.NewControllerManagedBy(mgr).
		Named("argocd-application").
		For(app, builder.WithPredicates(inScope)).
		WithOptions(controller.Options{
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](o.RetryBaseDelay, o.RetryMaxDelay),
		}).
		Complete(r)
}
