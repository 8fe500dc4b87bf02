package flux

import (
	"errors"
	"slices"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// WatchOptions configure the Kustomization watcher.
type WatchOptions struct {
	// Namespaces limits the Kustomizations watched; empty means all.
	Namespaces []string
	// Builder fetches and builds artifacts; required.
	Builder ArtifactBuilder
	// Proposals receives the proposals; required.
	Proposals *proposal.Store
	// FieldOwner writes the reconcile request annotation; default "claimwarden".
	FieldOwner string
	// RetryBaseDelay and RetryMaxDelay bound the back-off while a source
	// cannot be fetched or built; defaults 5 s and 5 min.
	RetryBaseDelay, RetryMaxDelay time.Duration
}

// SetupWithManager registers the Kustomization watcher with mgr. The scheme
// must know kustomize.toolkit.fluxcd.io/v1 and source.toolkit.fluxcd.io/v1.
func SetupWithManager(mgr ctrl.Manager, o WatchOptions) error {
	if o.Builder == nil || o.Proposals == nil {
		return errors.New("flux: WatchOptions.Builder and Proposals are required")
	}
	if o.FieldOwner == "" {
		o.FieldOwner = "claimwarden"
	}
	if o.RetryBaseDelay <= 0 {
		o.RetryBaseDelay = 5 * time.Second
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = 5 * time.Minute
	}
	r := &KustomizationReconciler{
		Client:     mgr.GetClient(),
		Reader:     mgr.GetAPIReader(),
		Builder:    o.Builder,
		Proposals:  o.Proposals,
		Recorder:   mgr.GetEventRecorder("claimwarden"),
		FieldOwner: o.FieldOwner,
	}
	inScope := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return len(o.Namespaces) == 0 || slices.Contains(o.Namespaces, obj.GetNamespace())
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("flux-kustomization").
		For(&kustomizev1.Kustomization{}, builder.WithPredicates(inScope)).
		WithOptions(controller.Options{
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](o.RetryBaseDelay, o.RetryMaxDelay),
		}).
		Complete(r)
}
