package storagesim

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestResizeTakesDelayThenGrowsVolumeAndClaim(t *testing.T) {
	pvc, pv := boundPair()
	s, clock := newFakeSim(t, expandableClass(), pvc, pv)
	key := client.ObjectKeyFromObject(pvc)
	setRequest(t, s, key, "3Gi")

	if res := reconcileClaim(t, s, key); res.RequeueAfter != testDelay {
		t.Fatalf("first look: requeue after %v, want the whole delay %v", res.RequeueAfter, testDelay)
	}
	got := getClaim(t, s, key)
	if storageOf(got.Status.Capacity) != "1Gi" {
		t.Fatalf("capacity grew before the delay: %s", storageOf(got.Status.Capacity))
	}
	if st := got.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; st != corev1.PersistentVolumeClaimControllerResizeInProgress {
		t.Fatalf("allocatedResourceStatuses[storage] = %q, want ControllerResizeInProgress", st)
	}
	if storageOf(got.Status.AllocatedResources) != "3Gi" || hasCondition(got, corev1.PersistentVolumeClaimResizing) == nil {
		t.Fatalf("in-progress status incomplete: %+v", got.Status)
	}

	clock.Advance(testDelay / 2)
	if res := reconcileClaim(t, s, key); res.RequeueAfter != testDelay/2 {
		t.Fatalf("half way: requeue after %v, want %v", res.RequeueAfter, testDelay/2)
	}
	if c := storageOf(getClaim(t, s, key).Status.Capacity); c != "1Gi" {
		t.Fatalf("capacity grew half way: %s", c)
	}

	clock.Advance(testDelay / 2)
	if res := reconcileClaim(t, s, key); res.RequeueAfter != 0 {
		t.Fatalf("after the delay: requeue after %v, want none", res.RequeueAfter)
	}
	got = getClaim(t, s, key)
	if storageOf(got.Status.Capacity) != "3Gi" || storageOf(got.Status.AllocatedResources) != "3Gi" {
		t.Fatalf("claim not grown: capacity %s allocated %s", storageOf(got.Status.Capacity), storageOf(got.Status.AllocatedResources))
	}
	if got.Status.AllocatedResourceStatuses != nil || len(got.Status.Conditions) != 0 {
		t.Fatalf("resize traces left: %v %v", got.Status.AllocatedResourceStatuses, got.Status.Conditions)
	}
	var vol corev1.PersistentVolume
	if err := s.Client.Get(context.Background(), client.ObjectKeyFromObject(pv), &vol); err != nil {
		t.Fatal(err)
	}
	if storageOf(vol.Spec.Capacity) != "3Gi" {
		t.Fatalf("volume capacity %s, want 3Gi", storageOf(vol.Spec.Capacity))
	}
}

func TestResizeIgnoresClassWithoutExpansion(t *testing.T) {
	pvc, pv := boundPair()
	s, clock := newFakeSim(t, StorageClass("fast", false), pvc, pv)
	key := client.ObjectKeyFromObject(pvc)
	setRequest(t, s, key, "2Gi")
	reconcileClaim(t, s, key)
	clock.Advance(2 * testDelay)
	reconcileClaim(t, s, key)
	got := getClaim(t, s, key)
	if storageOf(got.Status.Capacity) != "1Gi" || got.Status.AllocatedResourceStatuses != nil {
		t.Fatalf("claim of a non-expandable class was touched: %+v", got.Status)
	}
}

func TestInjectedFailureSticksUntilCleared(t *testing.T) {
	pvc, pv := boundPair()
	s, clock := newFakeSim(t, expandableClass(), pvc, pv)
	key := client.ObjectKeyFromObject(pvc)
	setRequest(t, s, key, "2Gi")
	s.FailResize(key.Namespace, key.Name, "out of space")

	reconcileClaim(t, s, key)
	clock.Advance(testDelay)
	reconcileClaim(t, s, key)
	assertFailed := func(when string) {
		t.Helper()
		got := getClaim(t, s, key)
		cond := hasCondition(got, corev1.PersistentVolumeClaimControllerResizeError)
		if cond == nil || cond.Status != corev1.ConditionTrue || cond.Message != "out of space" {
			t.Fatalf("%s: ControllerResizeError condition = %+v", when, cond)
		}
		if st := got.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; st != corev1.PersistentVolumeClaimControllerResizeInfeasible {
			t.Fatalf("%s: allocatedResourceStatuses[storage] = %q", when, st)
		}
		if storageOf(got.Status.Capacity) != "1Gi" || hasCondition(got, corev1.PersistentVolumeClaimResizing) != nil {
			t.Fatalf("%s: failed resize changed capacity or still resizing: %+v", when, got.Status)
		}
	}
	assertFailed("after the attempt")

	// Later looks must not flap back to in-progress while the failure is injected.
	clock.Advance(3 * testDelay)
	if res := reconcileClaim(t, s, key); res.RequeueAfter <= 0 {
		t.Fatal("a failed claim must be looked at again")
	}
	assertFailed("on a later look")

	s.ClearFailure(key.Namespace, key.Name)
	reconcileClaim(t, s, key)
	got := getClaim(t, s, key)
	if hasCondition(got, corev1.PersistentVolumeClaimControllerResizeError) != nil ||
		got.Status.AllocatedResourceStatuses[corev1.ResourceStorage] != corev1.PersistentVolumeClaimControllerResizeInProgress {
		t.Fatalf("cleared failure did not start a new attempt: %+v", got.Status)
	}
	clock.Advance(testDelay)
	reconcileClaim(t, s, key)
	if c := storageOf(getClaim(t, s, key).Status.Capacity); c != "2Gi" {
		t.Fatalf("capacity after cleared failure = %s, want 2Gi", c)
	}
}

func TestFailureAnnotation(t *testing.T) {
	pvc, pv := boundPair()
	pvc.Annotations = map[string]string{FailResizeAnnotation: "quota exceeded"}
	s, clock := newFakeSim(t, expandableClass(), pvc, pv)
	key := client.ObjectKeyFromObject(pvc)
	setRequest(t, s, key, "2Gi")
	reconcileClaim(t, s, key)
	clock.Advance(testDelay)
	reconcileClaim(t, s, key)
	cond := hasCondition(getClaim(t, s, key), corev1.PersistentVolumeClaimControllerResizeError)
	if cond == nil || cond.Message != "quota exceeded" {
		t.Fatalf("annotation failure not reported: %+v", cond)
	}

	got := getClaim(t, s, key)
	delete(got.Annotations, FailResizeAnnotation)
	if err := s.Client.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	reconcileClaim(t, s, key)
	clock.Advance(testDelay)
	reconcileClaim(t, s, key)
	if c := storageOf(getClaim(t, s, key).Status.Capacity); c != "2Gi" {
		t.Fatalf("capacity after removing the annotation = %s, want 2Gi", c)
	}
}

func TestConcurrentResizesAreIndependent(t *testing.T) {
	a, pvA := boundPair()
	b, pvB := boundPair()
	b.Name, b.UID, b.Spec.VolumeName = "data-web-1", "uid-2", "pvc-uid-2"
	pvB.Name, pvB.Spec.ClaimRef = "pvc-uid-2", &corev1.ObjectReference{Namespace: "ns", Name: b.Name, UID: b.UID}
	s, clock := newFakeSim(t, expandableClass(), a, pvA, b, pvB)
	ka, kb := client.ObjectKeyFromObject(a), client.ObjectKeyFromObject(b)

	setRequest(t, s, ka, "2Gi")
	reconcileClaim(t, s, ka)
	clock.Advance(testDelay / 2)
	setRequest(t, s, kb, "4Gi")
	reconcileClaim(t, s, kb)
	clock.Advance(testDelay / 2)
	reconcileClaim(t, s, ka)
	if res := reconcileClaim(t, s, kb); res.RequeueAfter != testDelay/2 {
		t.Fatalf("second claim's timer was not its own: requeue after %v", res.RequeueAfter)
	}
	if ca, cb := storageOf(getClaim(t, s, ka).Status.Capacity), storageOf(getClaim(t, s, kb).Status.Capacity); ca != "2Gi" || cb != "1Gi" {
		t.Fatalf("capacities %s, %s; want 2Gi (done) and 1Gi (still in progress)", ca, cb)
	}
}

// A request lowered below a failed one, still above the capacity, is a
// recovery (KEP-1790): the smaller resize succeeds although the failure
// is still injected, and allocatedResources follows it down.
func TestLoweredRequestRecoversFromAFailedResize(t *testing.T) {
	pvc, pv := boundPair()
	s, clock := newFakeSim(t, expandableClass(), pvc, pv)
	key := client.ObjectKeyFromObject(pvc)
	setRequest(t, s, key, "10Gi")
	s.FailResize(key.Namespace, key.Name, "out of space")
	reconcileClaim(t, s, key)
	clock.Advance(testDelay)
	reconcileClaim(t, s, key)
	got := getClaim(t, s, key)
	if hasCondition(got, corev1.PersistentVolumeClaimControllerResizeError) == nil || storageOf(got.Status.AllocatedResources) != "10Gi" {
		t.Fatalf("the 10Gi resize did not fail: %+v", got.Status)
	}

	setRequest(t, s, key, "2Gi")
	reconcileClaim(t, s, key)
	got = getClaim(t, s, key)
	if got.Status.AllocatedResourceStatuses[corev1.ResourceStorage] != corev1.PersistentVolumeClaimControllerResizeInProgress ||
		storageOf(got.Status.AllocatedResources) != "2Gi" || hasCondition(got, corev1.PersistentVolumeClaimControllerResizeError) != nil {
		t.Fatalf("the lowered request did not start a recovery: %+v", got.Status)
	}
	clock.Advance(testDelay)
	reconcileClaim(t, s, key)
	got = getClaim(t, s, key)
	if storageOf(got.Status.Capacity) != "2Gi" || storageOf(got.Status.AllocatedResources) != "2Gi" ||
		got.Status.AllocatedResourceStatuses != nil || len(got.Status.Conditions) != 0 {
		t.Fatalf("after the recovery: %+v, want capacity 2Gi and no trace of the failure", got.Status)
	}

	// The failure is still injected: growing past the recovered size fails again.
	setRequest(t, s, key, "3Gi")
	reconcileClaim(t, s, key)
	clock.Advance(testDelay)
	reconcileClaim(t, s, key)
	if hasCondition(getClaim(t, s, key), corev1.PersistentVolumeClaimControllerResizeError) == nil {
		t.Fatal("a later growth succeeded while the failure is injected")
	}
}
