package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
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
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// SetupWithManager registers the rollout controller with mgr, and returns
// it for who assesses proposals ahead of it (Ahead).
func SetupWithManager(mgr ctrl.Manager, opts Options) (*Reconciler, error) {
	opts = opts.withDefaults()
	if opts.Policies == nil {
		return nil, errors.New("rollout: Options.Policies is required: no claim is patched without a verdict")
	}
	if opts.JournalKeySecret.Namespace == "" || opts.JournalKeySecret.Name == "" {
		return nil, errors.New("rollout: Options.JournalKeySecret is required: no StatefulSet is re-created from an unsealed journal")
	}
	c := mgr.GetClient()
	pods, err := newPodCache(mgr, opts.Namespaces)
	if err != nil {
		return nil, fmt.Errorf("rollout: the Pod cache: %w", err)
	}
	if err := mgr.Add(pods); err != nil {
		return nil, err
	}
	journal := &rolloutJournal{client: c, reader: mgr.GetAPIReader()}
	events := opts.Recorder.Or(mgr)
	if opts.Writer == nil {
		opts.Writer = NewWriter(c, mgr.GetAPIReader())
	}
	r := &Reconciler{
		client:  c,
		writer:  opts.Writer,
		events:  events,
		sinks:   append(outcome.Sinks{outcome.NewEventSink(events, opts.EventMemory)}, opts.Sinks...),
		index:   &indexes{indexer: mgr.GetFieldIndexer()},
		opts:    opts,
		journal: journal,
		converger: converge.New(converge.Options{
			Client:  c,
			Reader:  mgr.GetAPIReader(),
			Journal: journal,
			// Uncached: the controller watches no Secrets.
			JournalKey: (&journalKeys{reader: mgr.GetAPIReader(), writer: c, secret: opts.JournalKeySecret}).get,
		}),
		retry:        workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](opts.RetryBaseDelay, opts.RetryMaxDelay),
		restartRetry: workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](opts.RetryBaseDelay, opts.RetryMaxDelay),
		pods:         mgr.GetAPIReader(),
		podCache:     pods,
		verdicts:     gate.NewCache(opts.Policies, gate.CacheOptions{Recheck: opts.PolicyRecheck}),
		claimUpdates: &claimUpdates{config: mgr.GetConfig(), reader: mgr.GetAPIReader()},
		server:       &serverSupport{config: mgr.GetConfig(), client: c},
	}
	policyEvents := make(chan event.GenericEvent)
	if opts.PolicyChanges != nil {
		if err := mgr.Add(&policyRelay{client: c, changes: opts.PolicyChanges, out: policyEvents}); err != nil {
			return nil, err
		}
	}
	b := ctrl.NewControllerManagedBy(mgr)
	if opts.Proposals != nil {
		b = b.WatchesRawSource(source.Channel(opts.Proposals.Events(), &handler.EnqueueRequestForObject{}))
	}
	return r, b.
		Named("volumeclaimrollout").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.Workers, 1)}).
		For(&appsv1.StatefulSet{}, builder.WithPredicates(r.managedPredicate())).
		// A VolumeClaimRollout shares its StatefulSet's key. It is watched, not
		// Owned, because an orphan delete strips its owner reference while a
		// re-create is pending; creations, deletions and a person's recovery
		// from a refused journal matter (our own status writes must not
		// trigger reconciles).
		Watches(&v1alpha1.VolumeClaimRollout{}, &handler.EnqueueRequestForObject{},
			builder.WithPredicates(rolloutWatched())).
		Watches(&corev1.PersistentVolumeClaim{}, handler.EnqueueRequestsFromMapFunc(r.statefulSetsOfClaim)).
		// A StatefulSet's Pods, metadata only (newPodCache): under
		// updateStrategy OnDelete a Pod's deletion lets its claims through
		// (see plan.OnDelete).
		WatchesRawSource(source.Kind(pods, podMeta(),
			handler.TypedEnqueueRequestsFromMapFunc(r.onDeleteStatefulSetOfPod), podReplaced())).
		// Policy input beyond the StatefulSet and its claims: a StorageClass
		// (allowVolumeExpansion) and the Namespace (labels such as tier=prod).
		Watches(&storagev1.StorageClass{}, handler.EnqueueRequestsFromMapFunc(r.statefulSetsIn(""))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.statefulSetsIn(o.GetName())(ctx, o)
		}), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		// ResourceQuotas (quota-fits): a claim denied for want of room is
		// asked again when the quota grows or frees up.
		Watches(&corev1.ResourceQuota{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.statefulSetsIn(o.GetNamespace())(ctx, o)
		}), builder.WithPredicates(claimQuotaChanged())).
		WatchesRawSource(source.Channel(policyEvents, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// managedPredicate keeps StatefulSets inside the configured namespaces and
// label selector. Annotation and ownership checks happen in Reconcile so that
// they can be logged and reported.
func (r *Reconciler) managedPredicate() predicate.Predicate {
	return predicate.NewPredicateFuncs(r.inScope)
}

// inScope reports whether a StatefulSet is inside the configured namespaces
// and label selector. Reconcile checks it too, because StorageClass,
// Namespace and policy events enqueue StatefulSets without the predicate.
func (r *Reconciler) inScope(o client.Object) bool {
	if len(r.opts.Namespaces) > 0 && !slices.Contains(r.opts.Namespaces, o.GetNamespace()) {
		return false
	}
	return r.opts.LabelSelector.Matches(labels.Set(o.GetLabels()))
}

// statefulSetsIn maps an object to every StatefulSet in namespace ("" = all).
func (r *Reconciler) statefulSetsIn(namespace string) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		var list appsv1.StatefulSetList
		if err := r.client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing StatefulSets", "namespace", namespace)
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	}
}

// policyRelay turns policy changes into one generic event per StatefulSet.
type policyRelay struct {
	client  client.Client
	changes <-chan struct{}
	out     chan<- event.GenericEvent
}

// Start implements manager.Runnable.
func (p *policyRelay) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.changes:
		}
		var list appsv1.StatefulSetList
		if err := p.client.List(ctx, &list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing StatefulSets after a policy change")
			continue
		}
		for i := range list.Items {
			select {
			case p.out <- event.GenericEvent{Object: &list.Items[i]}:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// statefulSetsOfClaim maps a PVC to the StatefulSets whose templates name it
// (<template>-<statefulset>-<ordinal>), found through the cache's index of
// template stems rather than by reading every StatefulSet of the namespace.
func (r *Reconciler) statefulSetsOfClaim(ctx context.Context, o client.Object) []reconcile.Request {
	stem, _, ok := diff.SplitOrdinal(o.GetName())
	if !ok {
		return nil
	}
	var list appsv1.StatefulSetList
	if err := r.index.ensure(ctx); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing StatefulSets for a claim", "pvc", client.ObjectKeyFromObject(o))
		return nil
	}
	if err := r.client.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{templateStemsIndex: stem}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing StatefulSets for a claim", "pvc", client.ObjectKeyFromObject(o))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}
