package storagesim

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// runningPod is a scheduled, running Pod of uid using the claim data-web-0.
func runningPod(name string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid},
		Spec: corev1.PodSpec{
			NodeName:   "kwok-node",
			Containers: []corev1.Container{{Name: "db", Image: "db"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-web-0"}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func offlinePair() (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	pvc, pv := boundPair()
	pvc.Annotations = map[string]string{OfflineResizeAnnotation: "true"}
	return pvc, pv
}

// expandOffline raises the request to 3Gi and lets the controller expansion finish.
func expandOffline(t *testing.T, s *Simulator, clock *fakeClock, key types.NamespacedName) {
	t.Helper()
	setRequest(t, s, key, "3Gi")
	reconcileClaim(t, s, key)
	clock.Advance(testDelay)
	if res := reconcileClaim(t, s, key); res.RequeueAfter != 0 {
		t.Fatalf("after the delay: requeue after %v, want none (Pods wake the claim up)", res.RequeueAfter)
	}
}

// assertWaitsForNode checks that the volume grew and the claim waits for its file system.
func assertWaitsForNode(t *testing.T, s *Simulator, key types.NamespacedName, pv *corev1.PersistentVolume, mountedBy string) {
	t.Helper()
	got := getClaim(t, s, key)
	if storageOf(got.Status.Capacity) != "1Gi" || storageOf(got.Status.AllocatedResources) != "3Gi" {
		t.Fatalf("capacity %s allocated %s, want 1Gi until a remount and 3Gi", storageOf(got.Status.Capacity), storageOf(got.Status.AllocatedResources))
	}
	if st := got.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; st != corev1.PersistentVolumeClaimNodeResizePending {
		t.Fatalf("allocatedResourceStatuses[storage] = %q, want NodeResizePending", st)
	}
	if c := hasCondition(got, corev1.PersistentVolumeClaimFileSystemResizePending); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("conditions %+v, want FileSystemResizePending True", got.Status.Conditions)
	}
	if hasCondition(got, corev1.PersistentVolumeClaimResizing) != nil {
		t.Fatalf("Resizing left after the controller expansion: %+v", got.Status.Conditions)
	}
	var vol corev1.PersistentVolume
	if err := s.Client.Get(context.Background(), client.ObjectKeyFromObject(pv), &vol); err != nil {
		t.Fatal(err)
	}
	if storageOf(vol.Spec.Capacity) != "3Gi" || vol.Annotations[annMountedBy] != mountedBy {
		t.Fatalf("volume capacity %s mounted-by %q, want 3Gi and %q", storageOf(vol.Spec.Capacity), vol.Annotations[annMountedBy], mountedBy)
	}
}

func assertGrown(t *testing.T, s *Simulator, key types.NamespacedName) {
	t.Helper()
	got := getClaim(t, s, key)
	if storageOf(got.Status.Capacity) != "3Gi" || got.Status.AllocatedResourceStatuses != nil || len(got.Status.Conditions) != 0 {
		t.Fatalf("after the remount: capacity %s, statuses %v, conditions %+v; want 3Gi and no traces",
			storageOf(got.Status.Capacity), got.Status.AllocatedResourceStatuses, got.Status.Conditions)
	}
}

func TestOfflineResizeGrowsTheFileSystemOnlyInANewPod(t *testing.T) {
	pvc, pv := offlinePair()
	old := runningPod("web-0", "pod-1")
	s, clock := newFakeSim(t, expandableClass(), pvc, pv, old)
	key := client.ObjectKeyFromObject(pvc)
	expandOffline(t, s, clock, key)
	assertWaitsForNode(t, s, key, pv, "pod-1")

	// The Pod that had it mounted keeps running: nothing changes.
	clock.Advance(10 * testDelay)
	reconcileClaim(t, s, key)
	assertWaitsForNode(t, s, key, pv, "pod-1")

	// Being deleted, it is no mount either.
	ctx := context.Background()
	if err := s.Client.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	reconcileClaim(t, s, key)
	assertWaitsForNode(t, s, key, pv, "pod-1")

	// Its replacement (same name, new UID) is scheduled but not running yet.
	next := runningPod("web-0", "pod-2")
	next.Status.Phase = corev1.PodPending
	if err := s.Client.Create(ctx, next); err != nil {
		t.Fatal(err)
	}
	reconcileClaim(t, s, key)
	assertWaitsForNode(t, s, key, pv, "pod-1")

	next.Status.Phase = corev1.PodRunning
	if err := s.Client.Status().Update(ctx, next); err != nil {
		t.Fatal(err)
	}
	reconcileClaim(t, s, key)
	assertGrown(t, s, key)
}

func TestOfflineResizeWithoutAPodWaitsForTheFirstMount(t *testing.T) {
	pvc, pv := offlinePair()
	s, clock := newFakeSim(t, expandableClass(), pvc, pv)
	key := client.ObjectKeyFromObject(pvc)
	expandOffline(t, s, clock, key)
	assertWaitsForNode(t, s, key, pv, "")
	reconcileClaim(t, s, key)
	assertWaitsForNode(t, s, key, pv, "")

	if err := s.Client.Create(context.Background(), runningPod("web-0", "pod-1")); err != nil {
		t.Fatal(err)
	}
	reconcileClaim(t, s, key)
	assertGrown(t, s, key)
}

func TestOnlineResizeIgnoresPods(t *testing.T) {
	pvc, pv := boundPair()
	s, clock := newFakeSim(t, expandableClass(), pvc, pv, runningPod("web-0", "pod-1"))
	key := client.ObjectKeyFromObject(pvc)
	expandOffline(t, s, clock, key)
	assertGrown(t, s, key)
}

func TestClaimsOfPod(t *testing.T) {
	pod := runningPod("web-0", "pod-1")
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	s, _ := newFakeSim(t)
	reqs := s.claimsOfPod(context.Background(), pod)
	if len(reqs) != 1 || reqs[0].NamespacedName != (types.NamespacedName{Namespace: "ns", Name: "data-web-0"}) {
		t.Fatalf("claims of the Pod: %v, want ns/data-web-0 only", reqs)
	}
}

func TestOfflineResizeNeverGrowsTheFileSystemWhenToldSo(t *testing.T) {
	pvc, pv := offlinePair()
	pvc.Annotations[OfflineResizeAnnotation] = OfflineResizeNever
	s, clock := newFakeSim(t, expandableClass(), pvc, pv)
	key := client.ObjectKeyFromObject(pvc)
	expandOffline(t, s, clock, key)
	if err := s.Client.Create(context.Background(), runningPod("web-0", "pod-1")); err != nil {
		t.Fatal(err)
	}
	reconcileClaim(t, s, key)
	assertWaitsForNode(t, s, key, pv, "")
}
