package storagesim

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// updateClaimStatus applies mutate to the newest version of the claim and
// writes it through the status subresource, retrying on conflicts. The
// cached copy the reconciler saw may be stale, so each try re-reads. It
// reports whether anything was written.
func (s *Simulator) updateClaimStatus(ctx context.Context, key types.NamespacedName, uid types.UID,
	mutate func(*corev1.PersistentVolumeClaim)) (bool, error) {
	written := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var pvc corev1.PersistentVolumeClaim
		if err := s.APIReader.Get(ctx, key, &pvc); err != nil {
			return err
		}
		if pvc.UID != uid {
			return nil // re-created meanwhile: not the claim this decision was about
		}
		before := pvc.Status.DeepCopy()
		mutate(&pvc)
		if equality.Semantic.DeepEqual(before, &pvc.Status) {
			return nil
		}
		if err := s.Client.Status().Update(ctx, &pvc); err != nil {
			return err
		}
		written = true
		return nil
	})
	return written, err
}

// updateVolume applies mutate (to the spec or annotations) to the newest
// version of the volume, retrying on conflicts.
func (s *Simulator) updateVolume(ctx context.Context, name string, mutate func(*corev1.PersistentVolume)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var pv corev1.PersistentVolume
		if err := s.APIReader.Get(ctx, client.ObjectKey{Name: name}, &pv); err != nil {
			return err
		}
		before := pv.DeepCopy()
		mutate(&pv)
		if equality.Semantic.DeepEqual(before.Spec, pv.Spec) && equality.Semantic.DeepEqual(before.Annotations, pv.Annotations) {
			return nil
		}
		return s.Client.Update(ctx, &pv)
	})
}

// setCondition sets a claim condition, keeping its transition time when the
// status does not change (as the real resizer's condition merge does).
func setCondition(pvc *corev1.PersistentVolumeClaim, cond corev1.PersistentVolumeClaimCondition, now metav1.Time) {
	for i := range pvc.Status.Conditions {
		c := &pvc.Status.Conditions[i]
		if c.Type != cond.Type {
			continue
		}
		if c.Status != cond.Status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = cond.Status, cond.Reason, cond.Message
		return
	}
	cond.LastTransitionTime = now
	pvc.Status.Conditions = append(pvc.Status.Conditions, cond)
}

// removeConditions drops the claim conditions of the given types.
func removeConditions(pvc *corev1.PersistentVolumeClaim, kinds ...corev1.PersistentVolumeClaimConditionType) {
	kept := pvc.Status.Conditions[:0]
	for _, c := range pvc.Status.Conditions {
		drop := false
		for _, t := range kinds {
			drop = drop || c.Type == t
		}
		if !drop {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	pvc.Status.Conditions = kept
}
