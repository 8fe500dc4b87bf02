package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// SetupWithManager registers the rollout controller of mgr's own cluster
// with mgr, and returns it for who assesses proposals ahead of it (Ahead).
func SetupWithManager(mgr ctrl.Manager, opts Options) (*Reconciler, error) {
	return SetupWithCluster(mgr, mgr, opts)
}

// SetupWithCluster registers with mgr a rollout controller of cl: every
// read, write, watch and cache of it is cl's, and so are its events by
// default; only the journal key Secret is mgr's. A cluster other than
// mgr's needs Options.ClusterName, and is started by whoever added it to
// mgr (mgr.Add(cl)), since other controllers may share it; mgr runs the
// controller, its work queue and its Pod cache.
func SetupWithCluster(mgr ctrl.Manager, cl cluster.Cluster, opts Options) (*Reconciler, error) {
	opts = opts.withDefaults()
	if opts.Policies == nil {
		return nil, errors.New("rollout: Options.Policies is required: no claim is patched without a verdict")
	}
	if opts.JournalKeySecret.Namespace == "" || opts.JournalKeySecret.Name == "" {
		return nil, errors.New("rollout: Options.JournalKeySecret is required: no StatefulSet is re-created from an unsealed journal")
	}
	if err := checkCluster(mgr, cl, opts.ClusterName); err != nil {
		return nil, err
	}
	c := cl.GetClient()
	pods, err := newPodCache(cl, opts.Namespaces)
	if err != nil {
		return nil, fmt.Errorf("rollout: the Pod cache: %w", err)
	}
	if err := mgr.Add(pods); err != nil {
		return nil, err
	}
	journal := &rolloutJournal{client: c, reader: cl.GetAPIReader()}
	// Recorded where the StatefulSet is: an event's object must be in the
	// cluster that records it.
	events := opts.Recorder.Or(cl)
	if opts.Writer == nil {
		opts.Writer = NewWriter(c, cl.GetAPIReader())
	}
	r := &Reconciler{
		client:       c,
		clusterLabel: ClusterLabel(opts.ClusterName),
		writer:       opts.Writer,
		events:       events,
		sinks:        append(outcome.Sinks{outcome.NewEventSink(events, opts.EventMemory)}, opts.Sinks...),
		index:        &indexes{indexer: cl.GetFieldIndexer()},
		opts:         opts,
		journal:      journal,
		converger: converge.New(converge.Options{
			Client:  c,
			Reader:  cl.GetAPIReader(),
			Journal: journal,
			// The key is claimwarden's own secret, so it stays on mgr's
			// cluster, whatever cluster the journal is on: on a spoke its
			// tenants or admins could read it (and seal a record that makes
			// claimwarden create any StatefulSet) or plant one. Uncached:
			// the controller watches no Secrets.
			JournalKey: (&journalKeys{reader: mgr.GetAPIReader(), writer: mgr.GetClient(), secret: opts.JournalKeySecret}).get,
		}),
		retry:        workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](opts.RetryBaseDelay, opts.RetryMaxDelay),
		restartRetry: workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](opts.RetryBaseDelay, opts.RetryMaxDelay),
		pods:         cl.GetAPIReader(),
		podCache:     pods,
		verdicts:     gate.NewCache(opts.Policies, gate.CacheOptions{Recheck: opts.PolicyRecheck}),
		claimUpdates: &claimUpdates{config: cl.GetConfig(), reader: cl.GetAPIReader()},
		server:       &serverSupport{config: cl.GetConfig(), client: c},
	}
	policyEvents := make(chan event.GenericEvent)
	if opts.PolicyChanges != nil {
		if err := mgr.Add(&policyRelay{client: c, changes: opts.PolicyChanges, out: policyEvents}); err != nil {
			return nil, err
		}
	}
	name := controllerNameOf(opts.ClusterName)
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.Workers, 1), CacheSyncTimeout: syncTimeoutOf(opts.ClusterName)}).
		WithLogConstructor(reconcileLogger(mgr.GetLogger(), name))
	for _, src := range r.sources(cl.GetCache(), pods, policyEvents) {
		b = b.WatchesRawSource(src)
	}
	return r, b.Complete(r)
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
