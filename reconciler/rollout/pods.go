package rollout

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// CachePods is the cache configuration of the Pods the controller watches:
// the metadata of a StatefulSet's Pods, which the StatefulSet controller
// labels with their names from their creation on (and an orphan delete
// leaves labelled), without their annotations. The Pods of every other
// workload, most of a cluster's, are neither listed nor watched.
func CachePods() (client.Object, cache.ByObject) {
	has, err := labels.NewRequirement(appsv1.StatefulSetPodNameLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid key
	}
	pod := &metav1.PartialObjectMetadata{}
	pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	return pod, cache.ByObject{Label: labels.NewSelector().Add(*has), Transform: podMetadata}
}

// podMetadata keeps of a Pod's metadata what onDeleteOf and the Pod watch
// read (names, labels, owners, deletion): annotations, often kilobytes of
// a mesh's or a CNI's status, and managed fields go.
func podMetadata(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.Annotations, m.ManagedFields = nil, nil
	}
	return obj, nil
}

// onDeleteOf reads which claims of an OnDelete StatefulSet wait for their
// Pods (plan.OnDeleteOf), from the cached metadata of its Pods. The Pods of
// any other StatefulSet are not read.
func (r *Reconciler) onDeleteOf(ctx context.Context, sts *appsv1.StatefulSet) (plan.OnDelete, error) {
	if sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType {
		return plan.OnDelete{}, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil {
		return plan.OnDelete{}, fmt.Errorf("StatefulSet %s/%s: spec.selector: %w", sts.Namespace, sts.Name, err)
	}
	var pods metav1.PartialObjectMetadataList
	pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := r.client.List(ctx, &pods, client.InNamespace(sts.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return plan.OnDelete{}, fmt.Errorf("listing the Pods of StatefulSet %s/%s: %w", sts.Namespace, sts.Name, err)
	}
	metas := make([]metav1.ObjectMeta, len(pods.Items))
	for i := range pods.Items {
		metas[i] = pods.Items[i].ObjectMeta
	}
	key := client.ObjectKeyFromObject(sts)
	d := plan.OnDeleteOf(sts, metas, r.memory.seenPods(key, sts.UID))
	r.memory.setSeenPods(key, sts.UID, d.Seen)
	return d, nil
}

// onDeleteStatefulSetOfPod maps a Pod to its controlling StatefulSet when
// that one's updateStrategy is OnDelete: the Pods of any other StatefulSet
// say nothing to its claims, and a rolling update must not reconcile it
// once per Pod.
func (r *Reconciler) onDeleteStatefulSetOfPod(ctx context.Context, o client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(o)
	if ref == nil || ref.Kind != "StatefulSet" || ref.APIVersion != appsv1.SchemeGroupVersion.String() {
		return nil
	}
	var sts appsv1.StatefulSet
	key := client.ObjectKey{Namespace: o.GetNamespace(), Name: ref.Name}
	if err := r.client.Get(ctx, key, &sts); err != nil || sts.UID != ref.UID ||
		sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

// podReplaced passes the Pod events that can let an OnDelete StatefulSet's
// claims through: a Pod created, being deleted, or gone. Status updates,
// the bulk of Pod events, are dropped.
func podReplaced() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
