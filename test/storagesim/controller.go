package storagesim

import (
	"cmp"
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// SetupWithManager registers the simulator's controllers: one for claims
// (provisioning, resizing, modification) and one for volumes (deletion).
func (s *Simulator) SetupWithManager(mgr ctrl.Manager) error {
	s.init()
	if s.Client == nil {
		s.Client = mgr.GetClient()
	}
	if s.APIReader == nil {
		s.APIReader = mgr.GetAPIReader()
	}
	s.recorder = mgr.GetEventRecorder("storagesim")
	// Several simulators may run in one test binary (one per test), so the
	// process-wide controller name check is skipped.
	opts := controller.Options{MaxConcurrentReconciles: cmp.Or(s.Workers, 4), SkipNameValidation: ptr.To(true)}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("storagesim-claims").
		For(&corev1.PersistentVolumeClaim{}).
		// A class created after its claims must still get them provisioned.
		Watches(&storagev1.StorageClass{}, handler.EnqueueRequestsFromMapFunc(s.claimsOfClass)).
		// A Pod that starts may be the mount an offline expansion waits for.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(s.claimsOfPod)).
		WatchesRawSource(source.Channel(s.wake, &handler.EnqueueRequestForObject{})).
		WithOptions(opts).
		Complete(reconcile.Func(s.reconcileClaim))
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("storagesim-volumes").
		For(&corev1.PersistentVolume{}).
		WithOptions(opts).
		Complete(reconcile.Func(s.reconcileVolume))
}

func (s *Simulator) claimsOfClass(ctx context.Context, obj client.Object) []reconcile.Request {
	var list corev1.PersistentVolumeClaimList
	if err := s.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing claims for class", "class", obj.GetName())
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if ptr.Deref(list.Items[i].Spec.StorageClassName, "") == obj.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// reconcileClaim dispatches one claim to the role the real component would play.
func (s *Simulator) reconcileClaim(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var pvc corev1.PersistentVolumeClaim
	if err := s.Client.Get(ctx, req.NamespacedName, &pvc); err != nil {
		if apierrors.IsNotFound(err) {
			s.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	class, err := s.classOf(ctx, &pvc)
	if err != nil || class == nil {
		return ctrl.Result{}, err
	}
	if pvc.Spec.VolumeName == "" {
		return ctrl.Result{}, s.provision(ctx, &pvc, class)
	}
	if pvc.Status.Phase != corev1.ClaimBound {
		return ctrl.Result{}, nil // the real PV binder has not finished yet
	}
	var pv corev1.PersistentVolume
	if err := s.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Like the real resizer, act only on volumes of this driver bound to this claim.
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != s.Provisioner ||
		pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
		return ctrl.Result{}, nil
	}
	resizeAfter, err := s.resize(ctx, &pvc, &pv, class)
	if err != nil {
		return ctrl.Result{}, err
	}
	modifyAfter, err := s.modify(ctx, &pvc, &pv)
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: soonest(resizeAfter, modifyAfter)}, nil
}

// classOf returns the claim's StorageClass if this simulator serves it.
func (s *Simulator) classOf(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
	name := ptr.Deref(pvc.Spec.StorageClassName, "")
	if name == "" {
		return nil, nil
	}
	var class storagev1.StorageClass
	if err := s.Client.Get(ctx, client.ObjectKey{Name: name}, &class); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if class.Provisioner != s.Provisioner {
		return nil, nil
	}
	return &class, nil
}

// forget drops in-memory operation state of a deleted claim (not its
// injected failure: a test may inject it before creating the claim).
func (s *Simulator) forget(key client.ObjectKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.resizes, key)
	delete(s.modifies, key)
}

// soonest is the smallest positive duration, or zero when none is.
func soonest(ds ...time.Duration) time.Duration {
	var best time.Duration
	for _, d := range ds {
		if d > 0 && (best == 0 || d < best) {
			best = d
		}
	}
	return best
}
