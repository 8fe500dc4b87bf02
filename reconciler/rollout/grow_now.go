package rollout

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/util/retry"
)

// Growth is one claim to grow now, and to what.
type Growth struct {
	Claim string
	To    resource.Quantity
}

// GrowNow grows the claims of sts in growths, in order, each to its size
// unless it requests as much already: a claim is never shrunk, nor created.
// It returns the claims it grew, up to the first that failed. The caller
// has checked that the identity the growth is made for may patch them
// (reconciler/authority) and that policies allowed the sizes.
func (w *Writer) GrowNow(ctx context.Context, sts *appsv1.StatefulSet, growths []Growth) (grown []string, err error) {
	for _, g := range growths {
		key := types.NamespacedName{Namespace: sts.Namespace, Name: g.Claim}
		grew, err := w.growClaim(ctx, key, g.To)
		if err != nil {
			return grown, fmt.Errorf("growing PVC %s to %s now: %w", key, g.To.String(), err)
		}
		if grew {
			grown = append(grown, g.Claim)
		}
	}
	return grown, nil
}

// floor raises the storage request of the rollout's apply pvc to what
// GrowNow applied to the claim, when that is more: the rollout decides
// from its cache, which may not hold the growth yet, and an apply of the
// size it read would lower the request (the API server lets a request
// fall back to above the capacity, KEP-1790). A claim is never shrunk,
// not even to recover from a failed expansion of what was grown now:
// undoing a growth the policies asked for is a person's call.
func (w *Writer) floor(pvc *corev1ac.PersistentVolumeClaimApplyConfiguration) {
	if pvc.Name == nil || pvc.Namespace == nil || pvc.Spec == nil || pvc.Spec.Resources == nil || pvc.Spec.Resources.Requests == nil {
		return
	}
	grown, ok := w.grownNow.Get(types.NamespacedName{Namespace: *pvc.Namespace, Name: *pvc.Name})
	if req := (*pvc.Spec.Resources.Requests)[corev1.ResourceStorage]; ok && req.Cmp(grown) < 0 {
		(*pvc.Spec.Resources.Requests)[corev1.ResourceStorage] = grown
	}
}

// growClaim applies the storage request to to the claim key when it
// requests less, and reports whether it did. The claim is read from the
// API server and the apply carries the resourceVersion read: a claim grown
// further in between (by the rollout, or a person) makes the apply a
// conflict, read again, instead of a shrink.
func (w *Writer) growClaim(ctx context.Context, key types.NamespacedName, to resource.Quantity) (grew bool, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var pvc corev1.PersistentVolumeClaim
		if err := w.reader.Get(ctx, key, &pvc); err != nil {
			return err
		}
		if req := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; req.Cmp(to) >= 0 {
			return nil
		}
		ac := corev1ac.PersistentVolumeClaim(key.Name, key.Namespace).WithResourceVersion(pvc.ResourceVersion).
			WithSpec(corev1ac.PersistentVolumeClaimSpec().WithResources(corev1ac.VolumeResourceRequirements().
				WithRequests(corev1.ResourceList{corev1.ResourceStorage: to})))
		if _, err := w.apply(ctx, ac, AutoresizeFieldOwner); err != nil {
			return err
		}
		w.grownNow.Add(key, to)
		grew = true
		return nil
	})
	return grew, err
}
