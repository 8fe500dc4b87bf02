package storagesim

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// provision plays the external-provisioner: it creates a volume pre-bound to
// the claim and leaves binding to the real PV binder.
func (s *Simulator) provision(ctx context.Context, pvc *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	if !s.wantsProvisioning(pvc, class) {
		return nil
	}
	pv := s.volumeFor(pvc, class)
	err := s.Client.Create(ctx, pv)
	if apierrors.IsAlreadyExists(err) {
		return nil // provisioned earlier; the cache had not seen the claim's binding yet
	}
	if err != nil {
		s.recorder.Eventf(pvc, nil, corev1.EventTypeWarning, "ProvisioningFailed", "Provision", "simulated provisioning failed: %v", err)
		return err
	}
	ctrl.LoggerFrom(ctx).Info("provisioned volume", "volume", pv.Name)
	s.recorder.Eventf(pvc, pv, corev1.EventTypeNormal, "ProvisioningSucceeded", "Provision",
		"Successfully provisioned volume %s (storage simulator)", pv.Name)
	return nil
}

// wantsProvisioning mirrors the external-provisioner's checks for a claim of
// one of its classes.
func (s *Simulator) wantsProvisioning(pvc *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) bool {
	if pvc.DeletionTimestamp != nil || pvc.Spec.VolumeName != "" || pvc.Status.Phase == corev1.ClaimBound {
		return false
	}
	// The PV controller names the provisioner it waits for; another one is not us.
	if p, ok := pvc.Annotations[annStorageProvisioner]; ok && p != s.Provisioner {
		return false
	}
	// WaitForFirstConsumer: only after the scheduler picked a node.
	if ptr.Deref(class.VolumeBindingMode, storagev1.VolumeBindingImmediate) == storagev1.VolumeBindingWaitForFirstConsumer {
		return pvc.Annotations[annSelectedNode] != ""
	}
	return true
}

// volumeFor builds the volume the external-provisioner would create. The
// simulated driver has no topology, so no node affinity is set.
func (s *Simulator) volumeFor(pvc *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) *corev1.PersistentVolume {
	name := "pvc-" + string(pvc.UID)
	mode := pvc.Spec.VolumeMode
	if mode == nil {
		mode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{annProvisionedBy: s.Provisioner},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity: corev1.ResourceList{
				corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage],
			},
			AccessModes:                   pvc.Spec.AccessModes,
			VolumeMode:                    mode,
			StorageClassName:              class.Name,
			VolumeAttributesClassName:     pvc.Spec.VolumeAttributesClassName,
			PersistentVolumeReclaimPolicy: ptr.Deref(class.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete),
			MountOptions:                  class.MountOptions,
			ClaimRef: &corev1.ObjectReference{
				Kind:            "PersistentVolumeClaim",
				APIVersion:      "v1",
				Namespace:       pvc.Namespace,
				Name:            pvc.Name,
				UID:             pvc.UID,
				ResourceVersion: pvc.ResourceVersion,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{
					Driver:       s.Provisioner,
					VolumeHandle: "storagesim-" + string(pvc.UID),
				},
			},
		},
	}
}

// reconcileVolume plays the external-provisioner's deletion: a released
// volume of this driver with reclaim policy Delete is removed.
func (s *Simulator) reconcileVolume(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var pv corev1.PersistentVolume
	if err := s.Client.Get(ctx, req.NamespacedName, &pv); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pv.Annotations[annProvisionedBy] != s.Provisioner || pv.Spec.CSI == nil || pv.Spec.CSI.Driver != s.Provisioner ||
		pv.Status.Phase != corev1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		pv.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	// Preconditions guard against deleting a volume that was re-bound meanwhile.
	err := s.Client.Delete(ctx, &pv, client.Preconditions{UID: &pv.UID, ResourceVersion: &pv.ResourceVersion})
	if err == nil {
		ctrl.LoggerFrom(ctx).Info("deleted released volume", "volume", pv.Name)
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return ctrl.Result{}, nil // gone, or changed: a newer event follows
	}
	return ctrl.Result{}, err
}
