package storagesim

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Offline expansion: many drivers grow the file system only while the
// volume is being mounted (NodeExpandVolume at stage time), so after the
// controller expansion the claim reports NodeResizePending and condition
// FileSystemResizePending, and its capacity grows only once a Pod mounts the
// volume again: a Pod using the claim that is not the one which had it
// mounted when the controller expansion finished. That Pod's UID is kept on
// the volume (annMountedBy), so a restarted simulator still knows it.

// annMountedBy on a volume whose file system waits names the UID of the Pod
// that had it mounted when the controller expansion finished ("" for none).
const annMountedBy = "storagesim.claimwarden.dev/mounted-by"

// offline reports whether the claim's expansions are offline.
func offline(pvc *corev1.PersistentVolumeClaim) bool {
	_, ok := pvc.Annotations[OfflineResizeAnnotation]
	return ok
}

// nodeResizePending reports whether the claim's file system waits for a
// remount: allocatedResourceStatuses says so where the server keeps it
// (RecoverVolumeExpansionFailure, on by default from 1.32), condition
// FileSystemResizePending on every server.
func nodeResizePending(pvc *corev1.PersistentVolumeClaim) bool {
	if pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage] == corev1.PersistentVolumeClaimNodeResizePending {
		return true
	}
	for _, c := range pvc.Status.Conditions {
		if c.Type == corev1.PersistentVolumeClaimFileSystemResizePending && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// finishOffline ends the controller part of an offline expansion: the
// volume is grown and remembers which Pod has it mounted; the claim waits
// for the node.
func (s *Simulator) finishOffline(ctx context.Context, pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume, target resource.Quantity) error {
	mounted, err := s.mountingPod(ctx, pvc)
	if err != nil {
		return err
	}
	uid := ""
	if mounted != nil {
		uid = string(mounted.UID)
	}
	err = s.updateVolume(ctx, pv.Name, func(v *corev1.PersistentVolume) {
		if c := v.Spec.Capacity[corev1.ResourceStorage]; c.Cmp(target) < 0 {
			v.Spec.Capacity[corev1.ResourceStorage] = target
		}
		if v.Annotations == nil {
			v.Annotations = map[string]string{}
		}
		v.Annotations[annMountedBy] = uid
	})
	if err != nil {
		return err
	}
	_, err = s.updateClaimStatus(ctx, client.ObjectKeyFromObject(pvc), pvc.UID, func(p *corev1.PersistentVolumeClaim) {
		markNodeResizePending(p, target, metav1.NewTime(s.now()))
	})
	if err == nil {
		ctrl.LoggerFrom(ctx).Info("expanded volume; its file system waits for a remount", "volume", pv.Name, "size", target.String(), "mountedBy", uid)
		s.recorder.Eventf(pvc, pv, corev1.EventTypeNormal, "FileSystemResizeRequired", "Resize",
			"Require file system resize of volume on node")
	}
	return err
}

// nodeResize plays the kubelet for a claim whose file system waits: once
// another Pod than the one recorded on the volume runs with the claim, the
// file system is grown and the claim reports its new capacity.
func (s *Simulator) nodeResize(ctx context.Context, pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) error {
	var vol corev1.PersistentVolume
	// Uncached: the annotation may have been written a moment ago.
	if err := s.APIReader.Get(ctx, client.ObjectKey{Name: pv.Name}, &vol); err != nil {
		return client.IgnoreNotFound(err)
	}
	pod, err := s.mountingPod(ctx, pvc)
	if err != nil || pod == nil || string(pod.UID) == vol.Annotations[annMountedBy] ||
		pvc.Annotations[OfflineResizeAnnotation] == OfflineResizeNever {
		return err
	}
	// The volume's size, as the kubelet grows to; allocatedResources says
	// the same where the server keeps it.
	target := vol.Spec.Capacity[corev1.ResourceStorage]
	if _, err := s.updateClaimStatus(ctx, client.ObjectKeyFromObject(pvc), pvc.UID, func(p *corev1.PersistentVolumeClaim) {
		markResizeFinished(p, target)
	}); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("grew the file system on mount", "volume", pv.Name, "size", target.String(), "pod", pod.Name)
	s.recorder.Eventf(pvc, pv, corev1.EventTypeNormal, "FileSystemResizeSuccessful", "Resize",
		"MountVolume.NodeExpandVolume succeeded for volume %q, Pod %s", pv.Name, pod.Name)
	return nil
}

// mountingPod is the running Pod that uses the claim, if any: scheduled,
// Running and not being deleted (kwok runs the Pods).
func (s *Simulator) mountingPod(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*corev1.Pod, error) {
	var pods corev1.PodList
	if err := s.APIReader.List(ctx, &pods, client.InNamespace(pvc.Namespace)); err != nil {
		return nil, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning || !p.DeletionTimestamp.IsZero() {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
				return p, nil
			}
		}
	}
	return nil, nil
}

// claimsOfPod maps a Pod to the claims it uses: a Pod that starts may be
// the mount an offline expansion waits for.
func (s *Simulator) claimsOfPod(_ context.Context, obj client.Object) []reconcile.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: v.PersistentVolumeClaim.ClaimName}})
		}
	}
	return reqs
}

// markNodeResizePending records a controller expansion that is done while
// the file system waits for the node, as the real resizer does for a driver
// that needs a node expansion.
func markNodeResizePending(p *corev1.PersistentVolumeClaim, target resource.Quantity, now metav1.Time) {
	if !wantsGrowth(p) {
		return
	}
	setStorage(&p.Status.AllocatedResources, target)
	setStorageStatus(p, corev1.PersistentVolumeClaimNodeResizePending)
	removeConditions(p, corev1.PersistentVolumeClaimResizing, corev1.PersistentVolumeClaimControllerResizeError)
	setCondition(p, corev1.PersistentVolumeClaimCondition{
		Type: corev1.PersistentVolumeClaimFileSystemResizePending, Status: corev1.ConditionTrue,
		Message: "Waiting for user to (re-)start a pod to finish file system resize of volume on node."}, now)
}
