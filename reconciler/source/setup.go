package source

import (
	"context"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// SetupWithManager registers the watcher of tool's objects with mgr, and
// the Nudgers that ask tool to apply again after a convergence, one per
// cluster by name ("" claimwarden's own, and each of o.Spokes): the
// rollout controller of each cluster publishes its outcomes to its own.
func SetupWithManager(mgr ctrl.Manager, tool Tool, o Options) (map[string]*Nudger, error) {
	o = o.withDefaults()
	if o.Name == "" {
		return nil, errors.New("source: Options.Name is required")
	}
	r, err := newReconciler(tool, Clients{
		Cached:   mgr.GetClient(),
		Uncached: mgr.GetAPIReader(),
		Recorder: o.Recorder.Or(mgr),
	}, o)
	if err != nil {
		return nil, err
	}
	nudgers := make(map[string]*Nudger, len(o.Spokes)+1)
	for name, c := range r.clusters() {
		log := mgr.GetLogger().WithName(o.Name)
		if name != "" {
			log = log.WithValues("cluster", name)
		}
		nudgers[name] = NewNudger(tool, c.Proposals, log, o.NudgeWait)
		if err := mgr.Add(nudgers[name]); err != nil {
			return nil, err
		}
	}
	inScope := scope(o)
	b := ctrl.NewControllerManagedBy(mgr).
		Named(o.Name).
		WithOptions(controller.Options{
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](o.RetryBaseDelay, o.RetryMaxDelay),
		})
	if o.Related == nil {
		b = b.For(tool.NewObject(), builder.WithPredicates(inScope))
	} else {
		b = b.Watches(tool.NewObject(), handler.EnqueueRequestsFromMapFunc(withRelated(o.Related)), builder.WithPredicates(inScope))
	}
	return nudgers, b.Complete(r)
}

// withRelated maps a tool object to its own request and those of the
// objects related names.
func withRelated(related func(context.Context, client.Object) []types.NamespacedName) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		reqs := []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(obj)}}
		for _, key := range related(ctx, obj) {
			reqs = append(reqs, reconcile.Request{NamespacedName: key})
		}
		return reqs
	}
}

// scope is the predicate of the tool objects a watcher queues: those of
// its namespaces, and with sharding (Options.Select) those this instance
// handles or none does (to be said so); an update that moves an object
// out of this instance's shard is queued too, so that what it proposed
// here is dropped.
func scope(o Options) predicate.Funcs {
	in := func(obj client.Object) bool {
		if len(o.Namespaces) > 0 && !slices.Contains(o.Namespaces, obj.GetNamespace()) {
			return false
		}
		if o.Select == nil {
			return true
		}
		handle, note := o.Select(obj)
		return handle || note != ""
	}
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return in(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return in(e.ObjectOld) || in(e.ObjectNew) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return in(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return in(e.Object) },
	}
}
