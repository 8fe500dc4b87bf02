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
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// newPodCache is the cache of the Pods the controller watches: the
// metadata of a StatefulSet's Pods, which the StatefulSet controller labels
// with their names from their creation on (and an orphan delete leaves
// labelled), without their annotations, in namespaces (all when empty).
// The Pods of every other workload, most of a cluster's, are neither
// listed nor watched. A cache of its own, rather than a rule of the
// manager's: a rule makes the manager ask the API server's discovery
// when it is created, and the process could not start, nor answer its
// probes, before the API server answers. The Pods are cl's, the cluster
// whose StatefulSets are rolled out.
func newPodCache(cl cluster.Cluster, namespaces []string) (cache.Cache, error) {
	o := podCacheOptions(namespaces)
	o.Scheme, o.Mapper = cl.GetScheme(), cl.GetRESTMapper()
	return cache.New(cl.GetConfig(), o)
}

func podCacheOptions(namespaces []string) cache.Options {
	has, err := labels.NewRequirement(appsv1.StatefulSetPodNameLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid key
	}
	o := cache.Options{
		DefaultLabelSelector: labels.NewSelector().Add(*has),
		DefaultTransform:     podMetadata,
		// Only Pods are read; asking for anything else is a bug.
		ReaderFailOnMissingInformer: true,
	}
	if len(namespaces) > 0 {
		o.DefaultNamespaces = make(map[string]cache.Config, len(namespaces))
		for _, ns := range namespaces {
			o.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return o
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

// podMeta is the object the Pod cache holds.
func podMeta() *metav1.PartialObjectMetadata {
	pod := &metav1.PartialObjectMetadata{}
	pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	return pod
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
	if err := r.podCache.List(ctx, &pods, client.InNamespace(sts.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
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
func (r *Reconciler) onDeleteStatefulSetOfPod(ctx context.Context, o *metav1.PartialObjectMetadata) []reconcile.Request {
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
func podReplaced() predicate.TypedPredicate[*metav1.PartialObjectMetadata] {
	return predicate.TypedFuncs[*metav1.PartialObjectMetadata]{
		UpdateFunc: func(e event.TypedUpdateEvent[*metav1.PartialObjectMetadata]) bool {
			return e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil
		},
		GenericFunc: func(event.TypedGenericEvent[*metav1.PartialObjectMetadata]) bool { return false },
	}
}
