package rollout

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
)

// SetupWithManager registers the rollout controller with mgr.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	c := mgr.GetClient()
	r := &Reconciler{
		client:   c,
		recorder: mgr.GetEventRecorder("claimwarden"),
		opts:     opts,
		converger: &converge.Converger{
			Client:  c,
			Reader:  mgr.GetAPIReader(),
			Journal: &rolloutJournal{client: c},
		},
		retry:   workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](opts.RetryBaseDelay, opts.RetryMaxDelay),
		skipped: &sync.Map{},
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("volumeclaimrollout").
		For(&appsv1.StatefulSet{}, builder.WithPredicates(r.managedPredicate())).
		// A VolumeClaimRollout shares its StatefulSet's key. It is watched, not
		// Owned, because an orphan delete strips its owner reference while a
		// re-create is pending; only creations and deletions matter (our own
		// status writes must not trigger reconciles).
		Watches(&v1alpha1.VolumeClaimRollout{}, &handler.EnqueueRequestForObject{},
			builder.WithPredicates(predicate.Funcs{
				UpdateFunc: func(event.UpdateEvent) bool { return false },
			})).
		Watches(&corev1.PersistentVolumeClaim{}, handler.EnqueueRequestsFromMapFunc(r.statefulSetsOfClaim)).
		Complete(r)
}

// managedPredicate keeps StatefulSets inside the configured namespaces and
// label selector. Annotation and ownership checks happen in Reconcile so that
// they can be logged and reported.
func (r *Reconciler) managedPredicate() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		if len(r.opts.Namespaces) > 0 && !slices.Contains(r.opts.Namespaces, o.GetNamespace()) {
			return false
		}
		return r.opts.LabelSelector.Matches(labels.Set(o.GetLabels()))
	})
}

// statefulSetsOfClaim maps a PVC to the StatefulSets whose templates name it
// (<template>-<statefulset>-<ordinal>). The PVC carries no owner reference to
// its StatefulSet, so the name is the only link the API guarantees.
func (r *Reconciler) statefulSetsOfClaim(ctx context.Context, o client.Object) []reconcile.Request {
	var list appsv1.StatefulSetList
	if err := r.client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing StatefulSets for a claim", "pvc", client.ObjectKeyFromObject(o))
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if claimOf(&list.Items[i], o.GetName()) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// claimOf reports whether claim is named like one of sts's claims.
func claimOf(sts *appsv1.StatefulSet, claim string) bool {
	for _, t := range sts.Spec.VolumeClaimTemplates {
		rest, ok := strings.CutPrefix(claim, t.Name+"-"+sts.Name+"-")
		if !ok {
			continue
		}
		if _, err := strconv.ParseUint(rest, 10, 32); err == nil {
			return true
		}
	}
	return false
}
