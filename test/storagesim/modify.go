package storagesim

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

	msg, failing := s.modifyFailure(pvc)
	a := s.modifyAttempt(key, pvc.UID, target, failing)
	now := metav1.NewTime(s.now())
	if a.failed != "" { // failed and the failure is still injected
		_, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
			markModifyFailed(p, target, msg, now)
		})
		return s.recheck(), err
	}
	if remaining := a.start.Add(s.Delay).Sub(now.Time); remaining > 0 {
		_, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
			markModifyInProgress(p, target, now)
		})
		return remaining, err
	}
	if failing {
		s.markAttemptFailed(s.modifies, key, msg)
		_, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
			markModifyFailed(p, target, msg, now)
		})
		s.recorder.Eventf(pvc, pv, corev1.EventTypeWarning, "VolumeModifyFailed", "Modify",
			"external resizer failed to modify volume %s with vac %s: %s", pv.Name, target, msg)
		return s.recheck(), err
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

// modifyAttempt returns the claim's current modification, starting a new one
// when there is none, the claim was re-created, the target changed, or it
// failed and the failure was cleared.
func (s *Simulator) modifyAttempt(key types.NamespacedName, uid types.UID, target string, failing bool) attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.modifies[key]
	if !ok || a.uid != uid || a.target != target || (a.failed != "" && !failing) {
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

// markModifyInProgress reports a modification in flight, as the real
// resizer does, dropping the error of an earlier failed attempt.
func markModifyInProgress(p *corev1.PersistentVolumeClaim, target string, now metav1.Time) {
	if ptr.Deref(p.Spec.VolumeAttributesClassName, "") != target {
		return
	}
	markModify(p, target, corev1.PersistentVolumeClaimModifyVolumeInProgress)
	removeConditions(p, corev1.PersistentVolumeClaimVolumeModifyVolumeError)
	setCondition(p, corev1.PersistentVolumeClaimCondition{
		Type: corev1.PersistentVolumeClaimVolumeModifyingVolume, Status: corev1.ConditionTrue}, now)
}

// markModifyFailed records a final (infeasible) modification error with the
// driver's message, as the real resizer does for an infeasible class.
func markModifyFailed(p *corev1.PersistentVolumeClaim, target, msg string, now metav1.Time) {
	if ptr.Deref(p.Spec.VolumeAttributesClassName, "") != target {
		return
	}
	markModify(p, target, corev1.PersistentVolumeClaimModifyVolumeInfeasible)
	removeConditions(p, corev1.PersistentVolumeClaimVolumeModifyingVolume)
	setCondition(p, corev1.PersistentVolumeClaimCondition{
		Type: corev1.PersistentVolumeClaimVolumeModifyVolumeError, Status: corev1.ConditionTrue, Message: msg}, now)
}

// markModified reports the class as applied and the modification as over.
func markModified(p *corev1.PersistentVolumeClaim, target string) {
	p.Status.CurrentVolumeAttributesClassName = ptr.To(target)
	p.Status.ModifyVolumeStatus = nil
	removeConditions(p, corev1.PersistentVolumeClaimVolumeModifyingVolume, corev1.PersistentVolumeClaimVolumeModifyVolumeError)
}
