package storagesim

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// resize plays the external-resizer (and, since simulated volumes need no
// file system resize, the kubelet). Each attempt takes Delay; an injected
// failure ends the attempt with ControllerResizeInfeasible and sticks (like
// the real resizer's slow retry of infeasible errors) until it is cleared.
// A request lowered below the failed one (and above the capacity, which is
// all the API server allows) is a recovery (KEP-1790): the smaller size is
// feasible, so that attempt succeeds although the failure is still
// injected. It returns when to look at the claim again.
func (s *Simulator) resize(ctx context.Context, pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume,
	class *storagev1.StorageClass) (time.Duration, error) {
	key := client.ObjectKeyFromObject(pvc)
	request := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity := pvc.Status.Capacity[corev1.ResourceStorage]
	allocated := pvc.Status.AllocatedResources[corev1.ResourceStorage]
	if allocated.IsZero() {
		// Servers without RecoverVolumeExpansionFailure (off by default
		// before 1.32) drop allocatedResources: the volume's size says it.
		allocated = pv.Spec.Capacity[corev1.ResourceStorage]
	}
	if nodeResizePending(pvc) && request.Cmp(allocated) <= 0 {
		// The controller part is done; the node's waits for a mount.
		s.endAttempt(s.resizes, key)
		return 0, s.nodeResize(ctx, pvc, pv)
	}
	if request.Cmp(capacity) <= 0 || !ptr.Deref(class.AllowVolumeExpansion, false) {
		s.endAttempt(s.resizes, key)
		return 0, nil
	}
	msg, failing := s.failure(pvc)
	a := s.resizeAttempt(key, pvc.UID, request, capacity, failing)
	target := resource.MustParse(a.target)
	now := metav1.NewTime(s.now())

	if a.failed != "" { // failed and the failure is still injected
		_, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
			markResizeFailed(p, target, msg, now)
		})
		return s.recheck(), err
	}
	if remaining := a.start.Add(s.Delay).Sub(now.Time); remaining > 0 {
		written, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
			markResizeInProgress(p, target, now)
		})
		if written {
			s.recorder.Eventf(pvc, pv, corev1.EventTypeNormal, "Resizing", "Resize",
				"Storage simulator is resizing volume %s to %s", pv.Name, a.target)
		}
		return remaining, err
	}
	if failing && a.recovers == "" {
		s.markAttemptFailed(s.resizes, key, msg)
		_, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
			markResizeFailed(p, target, msg, now)
		})
		s.recorder.Eventf(pvc, pv, corev1.EventTypeWarning, "VolumeResizeFailed", "Resize",
			"resize volume %q by resizer %q failed: %s", pv.Name, s.Provisioner, msg)
		return s.recheck(), err
	}
	if offline(pvc) {
		s.endAttempt(s.resizes, key)
		return 0, s.finishOffline(ctx, pvc, pv, target)
	}
	// The volume grows first, then the claim reports it: the real order.
	err := s.updateVolume(ctx, pv.Name, func(v *corev1.PersistentVolume) {
		if c := v.Spec.Capacity[corev1.ResourceStorage]; c.Cmp(target) < 0 {
			v.Spec.Capacity[corev1.ResourceStorage] = target
		}
	})
	if err != nil {
		return 0, err
	}
	if _, err := s.updateClaimStatus(ctx, key, pvc.UID, func(p *corev1.PersistentVolumeClaim) {
		markResizeFinished(p, target)
	}); err != nil {
		return 0, err
	}
	s.endAttempt(s.resizes, key)
	ctrl.LoggerFrom(ctx).Info("resized volume", "volume", pv.Name, "size", a.target)
	s.recorder.Eventf(pvc, pv, corev1.EventTypeNormal, "VolumeResizeSuccessful", "Resize", "Resize volume succeeded")
	// Our status write triggers the next reconcile, which starts another
	// attempt if the request grew meanwhile.
	return 0, nil
}

// resizeAttempt returns the claim's current attempt, starting a new one when
// there is none, the claim was re-created, the attempt would not grow the
// claim, or it failed and the failure was cleared or the request changed.
func (s *Simulator) resizeAttempt(key types.NamespacedName, uid types.UID, request, capacity resource.Quantity,
	failing bool) attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := &attempt{uid: uid, target: request.String(), start: s.now()}
	a, ok := s.resizes[key]
	if ok && a.uid == uid {
		target := resource.MustParse(a.target)
		stale := target.Cmp(capacity) <= 0 ||
			(a.failed != "" && (!failing || target.Cmp(request) != 0))
		if !stale {
			return *a
		}
		if a.failed != "" && request.Cmp(target) < 0 {
			// The smaller request recovers from the failed one.
			next.recovers = a.target
		}
	}
	s.resizes[key] = next
	return *next
}

func (s *Simulator) markAttemptFailed(m map[types.NamespacedName]*attempt, key types.NamespacedName, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := m[key]; ok {
		a.failed = msg
	}
}

func (s *Simulator) endAttempt(m map[types.NamespacedName]*attempt, key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(m, key)
}

// recheck is how often a failed claim is looked at again, so a failure
// cleared in memory is noticed even if its wake-up event was dropped.
func (s *Simulator) recheck() time.Duration {
	return max(s.Delay, time.Second)
}

// markResizeInProgress records an expansion in flight, as the real resizer does.
func markResizeInProgress(p *corev1.PersistentVolumeClaim, target resource.Quantity, now metav1.Time) {
	if !wantsGrowth(p) {
		return // the cached claim the decision was made on was stale
	}
	setStorage(&p.Status.AllocatedResources, target)
	setStorageStatus(p, corev1.PersistentVolumeClaimControllerResizeInProgress)
	removeConditions(p, corev1.PersistentVolumeClaimControllerResizeError)
	setCondition(p, corev1.PersistentVolumeClaimCondition{
		Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionTrue}, now)
}

// markResizeFailed records a final (infeasible) controller expansion error.
func markResizeFailed(p *corev1.PersistentVolumeClaim, target resource.Quantity, msg string, now metav1.Time) {
	if !wantsGrowth(p) {
		return
	}
	setStorage(&p.Status.AllocatedResources, target)
	setStorageStatus(p, corev1.PersistentVolumeClaimControllerResizeInfeasible)
	removeConditions(p, corev1.PersistentVolumeClaimResizing)
	setCondition(p, corev1.PersistentVolumeClaimCondition{
		Type: corev1.PersistentVolumeClaimControllerResizeError, Status: corev1.ConditionTrue, Message: msg}, now)
}

// markResizeFinished reports the new size and clears every trace of the
// expansion, as the real resizer does when no node expansion is needed.
func markResizeFinished(p *corev1.PersistentVolumeClaim, target resource.Quantity) {
	if c := p.Status.Capacity[corev1.ResourceStorage]; c.Cmp(target) < 0 {
		setStorage(&p.Status.Capacity, target)
	}
	setStorage(&p.Status.AllocatedResources, target)
	delete(p.Status.AllocatedResourceStatuses, corev1.ResourceStorage)
	if len(p.Status.AllocatedResourceStatuses) == 0 {
		p.Status.AllocatedResourceStatuses = nil
	}
	removeConditions(p,
		corev1.PersistentVolumeClaimResizing,
		corev1.PersistentVolumeClaimControllerResizeError,
		corev1.PersistentVolumeClaimFileSystemResizePending,
		corev1.PersistentVolumeClaimNodeResizeError)
}

// wantsGrowth reports whether the claim requests more than it has.
func wantsGrowth(p *corev1.PersistentVolumeClaim) bool {
	request := p.Spec.Resources.Requests[corev1.ResourceStorage]
	return request.Cmp(p.Status.Capacity[corev1.ResourceStorage]) > 0
}

func setStorage(list *corev1.ResourceList, q resource.Quantity) {
	if *list == nil {
		*list = corev1.ResourceList{}
	}
	(*list)[corev1.ResourceStorage] = q
}

func setStorageStatus(p *corev1.PersistentVolumeClaim, st corev1.ClaimResourceStatus) {
	if p.Status.AllocatedResourceStatuses == nil {
		p.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{}
	}
	p.Status.AllocatedResourceStatuses[corev1.ResourceStorage] = st
}
