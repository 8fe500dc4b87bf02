package benchkit

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Settled counts, with one list of each, the Ready replicas of the
// StatefulSets (of their current generation) and the Bound claims in the
// namespaces ours keeps (all when nil); claims are listed with opts.
func Settled(ctx context.Context, c client.Reader, ours func(namespace string) bool, opts ...client.ListOption) (ready, bound int, err error) {
	keep := func(ns string) bool { return ours == nil || ours(ns) }
	var sets appsv1.StatefulSetList
	if err := c.List(ctx, &sets); err != nil {
		return 0, 0, err
	}
	for _, s := range sets.Items {
		if keep(s.Namespace) && s.Status.ObservedGeneration == s.Generation {
			ready += int(s.Status.ReadyReplicas)
		}
	}
	var claims corev1.PersistentVolumeClaimList
	if err := c.List(ctx, &claims, opts...); err != nil {
		return 0, 0, err
	}
	for _, pvc := range claims.Items {
		if keep(pvc.Namespace) && pvc.Status.Phase == corev1.ClaimBound {
			bound++
		}
	}
	return ready, bound, nil
}
