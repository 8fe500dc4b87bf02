package storagesim

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestModifyAppliesVolumeAttributesClassAfterDelay(t *testing.T) {
	pvc, pv := boundPair()
	pvc.Spec.VolumeAttributesClassName = ptr.To("gold")
	gold := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "gold"},
		DriverName: DefaultProvisioner, Parameters: map[string]string{"iops": "9000"}}
	s, clock := newFakeSim(t, expandableClass(), gold, pvc, pv)
	key := client.ObjectKeyFromObject(pvc)

	if res := reconcileClaim(t, s, key); res.RequeueAfter != testDelay {
		t.Fatalf("requeue after %v, want %v", res.RequeueAfter, testDelay)
	}
	got := getClaim(t, s, key)
	if got.Status.CurrentVolumeAttributesClassName != nil {
		t.Fatal("class applied before the delay")
	}
	mvs := got.Status.ModifyVolumeStatus
	if mvs == nil || mvs.Status != corev1.PersistentVolumeClaimModifyVolumeInProgress || mvs.TargetVolumeAttributesClassName != "gold" {
		t.Fatalf("modifyVolumeStatus = %+v, want InProgress to gold", mvs)
	}

	clock.Advance(testDelay)
	reconcileClaim(t, s, key)
	got = getClaim(t, s, key)
	if ptr.Deref(got.Status.CurrentVolumeAttributesClassName, "") != "gold" || got.Status.ModifyVolumeStatus != nil {
		t.Fatalf("after the delay: current %v, modifyVolumeStatus %+v", got.Status.CurrentVolumeAttributesClassName, got.Status.ModifyVolumeStatus)
	}
	var vol corev1.PersistentVolume
	if err := s.Client.Get(context.Background(), client.ObjectKeyFromObject(pv), &vol); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(vol.Spec.VolumeAttributesClassName, "") != "gold" {
		t.Fatalf("volume class %v, want gold", vol.Spec.VolumeAttributesClassName)
	}
}

func TestModifyPendingWhileClassMissing(t *testing.T) {
	pvc, pv := boundPair()
	pvc.Spec.VolumeAttributesClassName = ptr.To("absent")
	s, clock := newFakeSim(t, expandableClass(), pvc, pv)
	key := client.ObjectKeyFromObject(pvc)
	reconcileClaim(t, s, key)
	clock.Advance(2 * testDelay)
	if res := reconcileClaim(t, s, key); res.RequeueAfter <= 0 {
		t.Fatal("a claim waiting for its class must be looked at again")
	}
	got := getClaim(t, s, key)
	if mvs := got.Status.ModifyVolumeStatus; mvs == nil || mvs.Status != corev1.PersistentVolumeClaimModifyVolumePending {
		t.Fatalf("modifyVolumeStatus = %+v, want Pending", mvs)
	}
	if got.Status.CurrentVolumeAttributesClassName != nil {
		t.Fatal("a missing class was applied")
	}
}

func goldClass() *storagev1.VolumeAttributesClass {
	return &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, DriverName: DefaultProvisioner}
}

func TestInjectedModifyFailureIsInfeasibleUntilCleared(t *testing.T) {
	pvc, pv := boundPair()
	pvc.Spec.VolumeAttributesClassName = ptr.To("gold")
	s, clock := newFakeSim(t, expandableClass(), goldClass(), pvc, pv)
	key := client.ObjectKeyFromObject(pvc)
	s.FailModify(key.Namespace, key.Name, "iops above the volume's limit")

	reconcileClaim(t, s, key)
	if mvs := getClaim(t, s, key).Status.ModifyVolumeStatus; mvs == nil || mvs.Status != corev1.PersistentVolumeClaimModifyVolumeInProgress {
		t.Fatalf("before the delay: modifyVolumeStatus %+v, want InProgress", mvs)
	}
	assertInfeasible := func(when string) {
		t.Helper()
		got := getClaim(t, s, key)
		mvs := got.Status.ModifyVolumeStatus
		if mvs == nil || mvs.Status != corev1.PersistentVolumeClaimModifyVolumeInfeasible || mvs.TargetVolumeAttributesClassName != "gold" {
			t.Fatalf("%s: modifyVolumeStatus %+v, want Infeasible to gold", when, mvs)
		}
		cond := hasCondition(got, corev1.PersistentVolumeClaimVolumeModifyVolumeError)
		if cond == nil || cond.Message != "iops above the volume's limit" {
			t.Fatalf("%s: ModifyVolumeError %+v, want the injected message", when, cond)
		}
		if got.Status.CurrentVolumeAttributesClassName != nil || hasCondition(got, corev1.PersistentVolumeClaimVolumeModifyingVolume) != nil {
			t.Fatalf("%s: applied or still modifying: %+v", when, got.Status)
		}
	}
	clock.Advance(testDelay)
	if res := reconcileClaim(t, s, key); res.RequeueAfter <= 0 {
		t.Fatal("a failed claim must be looked at again")
	}
	assertInfeasible("after the attempt")
	clock.Advance(3 * testDelay)
	reconcileClaim(t, s, key)
	assertInfeasible("on a later look")

	s.ClearFailure(key.Namespace, key.Name)
	reconcileClaim(t, s, key)
	got := getClaim(t, s, key)
	if mvs := got.Status.ModifyVolumeStatus; mvs == nil || mvs.Status != corev1.PersistentVolumeClaimModifyVolumeInProgress ||
		hasCondition(got, corev1.PersistentVolumeClaimVolumeModifyVolumeError) != nil {
		t.Fatalf("after clearing: %+v, want a fresh InProgress attempt without the error", got.Status)
	}
	clock.Advance(testDelay)
	reconcileClaim(t, s, key)
	got = getClaim(t, s, key)
	if ptr.Deref(got.Status.CurrentVolumeAttributesClassName, "") != "gold" || got.Status.ModifyVolumeStatus != nil || len(got.Status.Conditions) != 0 {
		t.Fatalf("after the retry: %+v, want gold applied and no traces", got.Status)
	}
}

func TestModifyFailureAnnotation(t *testing.T) {
	pvc, pv := boundPair()
	pvc.Spec.VolumeAttributesClassName = ptr.To("gold")
	pvc.Annotations = map[string]string{FailModifyAnnotation: "class not supported by this pool"}
	s, clock := newFakeSim(t, expandableClass(), goldClass(), pvc, pv)
	key := client.ObjectKeyFromObject(pvc)
	reconcileClaim(t, s, key)
	clock.Advance(testDelay)
	reconcileClaim(t, s, key)
	got := getClaim(t, s, key)
	cond := hasCondition(got, corev1.PersistentVolumeClaimVolumeModifyVolumeError)
	if mvs := got.Status.ModifyVolumeStatus; mvs == nil || mvs.Status != corev1.PersistentVolumeClaimModifyVolumeInfeasible ||
		cond == nil || cond.Message != "class not supported by this pool" {
		t.Fatalf("status %+v, want Infeasible with the annotation's message", got.Status)
	}
}
