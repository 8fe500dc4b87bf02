package storagesim

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// modify plays the external-resizer's modify controller: a claim whose
// spec.volumeAttributesClassName differs from its current class is moved to
// it after Delay, reporting modifyVolumeStatus meanwhile. It returns when to
// look at the claim again.
func (s *Simulator) modify(ctx context.Context, pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) (time.Duration, error) {
	key := client.ObjectKeyFromObject(pvc)
	target := ptr.Deref(pvc.Spec.VolumeAttributesClassName, "")
	if target == "" || target == ptr.Deref(pvc.Status.CurrentVolumeAttributesClassName, "") {
		s.endAttempt(s.modifies, key)
		return 0, nil
	}
	var vac storagev1.VolumeAttributesClass
	if err := s.Client.Get(ctx, client.ObjectKey{Name: target}, &vac); err != nil {
		if !apierrors.IsNotFound(err) {
			return 0, err
		}
		// The real resizer waits in Pending until the class exists.
		s.endAttempt(s.modifies, key)
		_, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
			markModify(p, target, corev1.PersistentVolumeClaimModifyVolumePending)
		})
		return s.recheck(), err
	}
	if vac.DriverName != s.Provisioner {
		// A class of another driver can never be applied to this volume.
		s.endAttempt(s.modifies, key)
		_, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
			markModify(p, target, corev1.PersistentVolumeClaimModifyVolumeInfeasible)
		})
		return 0, err
	}

	a := s.modifyAttempt(key, pvc.UID, target)
	if remaining := a.start.Add(s.Delay).Sub(s.now()); remaining > 0 {
		_, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
			markModify(p, target, corev1.PersistentVolumeClaimModifyVolumeInProgress)
		})
		return remaining, err
	}
	// The volume records its new class first, then the claim: the real order.
	if err := s.updateVolume(ctx, pv.Name, func(v *corev1.PersistentVolume) {
		v.Spec.VolumeAttributesClassName = ptr.To(target)
	}); err != nil {
		return 0, err
	}
	if _, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
		markModified(p, target)
	}); err != nil {
		return 0, err
	}
	s.endAttempt(s.modifies, key)
	ctrl.LoggerFrom(ctx).Info("modified volume", "volume", pv.Name, "volumeAttributesClass", target)
	s.recorder.Eventf(pvc, pv, corev1.EventTypeNormal, "VolumeModifySuccessful", "Modify",
		"external resizer modified volume %s with vac %s successfully", pv.Name, target)
	return 0, nil
}

func (s *Simulator) modifyAttempt(key types.NamespacedName, uid types.UID, target string) attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.modifies[key]
	if !ok || a.uid != uid || a.target != target {
		a = &attempt{uid: uid, target: target, start: s.now()}
		s.modifies[key] = a
	}
	return *a
}

// markModify reports a modification towards target in the given state,
// unless the fresh claim no longer asks for it.
func markModify(p *corev1.PersistentVolumeClaim, target string, st corev1.PersistentVolumeClaimModifyVolumeStatus) {
	if ptr.Deref(p.Spec.VolumeAttributesClassName, "") != target {
		return
	}
	p.Status.ModifyVolumeStatus = &corev1.ModifyVolumeStatus{TargetVolumeAttributesClassName: target, Status: st}
}

// markModified reports the class as applied and the modification as over.
func markModified(p *corev1.PersistentVolumeClaim, target string) {
	p.Status.CurrentVolumeAttributesClassName = ptr.To(target)
	p.Status.ModifyVolumeStatus = nil
	removeConditions(p, corev1.PersistentVolumeClaimVolumeModifyingVolume, corev1.PersistentVolumeClaimVolumeModifyVolumeError)
}
