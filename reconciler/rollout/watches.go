package rollout

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// sources are what the controller watches, from the cluster's cache c and
// its Pod cache: raw sources, since the builder's For and Watches only
// take the manager's cache and a spoke's objects are in the spoke's.
func (r *Reconciler) sources(c cache.Cache, pods cache.Cache, policyEvents <-chan event.GenericEvent) []source.Source {
	kind := func(obj client.Object, h handler.EventHandler, p ...predicate.Predicate) source.Source {
		return source.Kind(c, obj, h, p...)
	}
	var srcs []source.Source
	if r.opts.Proposals != nil {
		srcs = append(srcs, source.Channel(r.opts.Proposals.Events(), &handler.EnqueueRequestForObject{}))
	}
	return append(srcs,
		kind(&appsv1.StatefulSet{}, &handler.EnqueueRequestForObject{}, r.managedPredicate()),
		// A VolumeClaimRollout shares its StatefulSet's key. It is watched, not
		// Owned, because an orphan delete strips its owner reference while a
		// re-create is pending; creations, deletions and a person's recovery
		// from a refused journal matter (our own status writes must not
		// trigger reconciles).
		kind(&v1alpha1.VolumeClaimRollout{}, &handler.EnqueueRequestForObject{}, rolloutWatched()),
		kind(&corev1.PersistentVolumeClaim{}, handler.EnqueueRequestsFromMapFunc(r.statefulSetsOfClaim)),
		// A StatefulSet's Pods, metadata only (newPodCache): under
		// updateStrategy OnDelete a Pod's deletion lets its claims through
		// (see plan.OnDelete).
		source.Kind(pods, podMeta(), handler.TypedEnqueueRequestsFromMapFunc(r.onDeleteStatefulSetOfPod), podReplaced()),
		// Policy input beyond the StatefulSet and its claims: a StorageClass
		// (allowVolumeExpansion) and the Namespace (labels such as tier=prod).
		kind(&storagev1.StorageClass{}, handler.EnqueueRequestsFromMapFunc(r.statefulSetsIn(""))),
		kind(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.statefulSetsIn(o.GetName())(ctx, o)
		}), predicate.LabelChangedPredicate{}),
		// ResourceQuotas (quota-fits): a claim denied for want of room is
		// asked again when the quota grows or frees up.
		kind(&corev1.ResourceQuota{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.statefulSetsIn(o.GetNamespace())(ctx, o)
		}), claimQuotaChanged()),
		source.Channel(policyEvents, &handler.EnqueueRequestForObject{}),
	)
}
