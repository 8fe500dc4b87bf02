package storagesim

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Unit tests drive the reconcilers by hand against controller-runtime's fake
// client with a fake clock, so timing logic is checked exactly and fast; the
// real control plane is exercised by storagesim_test.go.

const testDelay = 10 * time.Second

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newFakeSim returns a simulator on a fake client holding objs.
func newFakeSim(t *testing.T, objs ...client.Object) (*Simulator, *fakeClock) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&corev1.PersistentVolumeClaim{}, &corev1.PersistentVolume{}).
		WithObjects(objs...).Build()
	clock := &fakeClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	s := &Simulator{Client: c, APIReader: c, Delay: testDelay, now: clock.Now}
	s.init()
	return s, clock
}

// boundPair returns a bound claim (request 1Gi = capacity) of class "fast"
// and its simulated volume.
func boundPair() (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-web-0", UID: "uid-1"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To("fast"),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			VolumeName: "pvc-uid-1",
		},
		Status: corev1.PersistentVolumeClaimStatus{
			Phase:    corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		},
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-uid-1", Annotations: map[string]string{annProvisionedBy: DefaultProvisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:         corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			StorageClassName: "fast",
			ClaimRef:         &corev1.ObjectReference{Namespace: "ns", Name: "data-web-0", UID: "uid-1"},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: DefaultProvisioner, VolumeHandle: "h"}},
		},
	}
	return pvc, pv
}

func reconcileClaim(t *testing.T, s *Simulator, key types.NamespacedName) ctrl.Result {
	t.Helper()
	res, err := s.reconcileClaim(context.Background(), reconcile.Request{NamespacedName: key})
	if err != nil {
		t.Fatalf("reconcile %s: %v", key, err)
	}
	return res
}

func getClaim(t *testing.T, s *Simulator, key types.NamespacedName) *corev1.PersistentVolumeClaim {
	t.Helper()
	var pvc corev1.PersistentVolumeClaim
	if err := s.Client.Get(context.Background(), key, &pvc); err != nil {
		t.Fatal(err)
	}
	return &pvc
}

// setRequest raises the claim's storage request, as a user would.
func setRequest(t *testing.T, s *Simulator, key types.NamespacedName, size string) {
	t.Helper()
	pvc := getClaim(t, s, key)
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(size)
	if err := s.Client.Update(context.Background(), pvc); err != nil {
		t.Fatal(err)
	}
}

func storageOf(l corev1.ResourceList) string {
	q, ok := l[corev1.ResourceStorage]
	if !ok {
		return "<none>"
	}
	return q.String()
}

func hasCondition(pvc *corev1.PersistentVolumeClaim, typ corev1.PersistentVolumeClaimConditionType) *corev1.PersistentVolumeClaimCondition {
	for i := range pvc.Status.Conditions {
		if pvc.Status.Conditions[i].Type == typ {
			return &pvc.Status.Conditions[i]
		}
	}
	return nil
}

func expandableClass() *storagev1.StorageClass { return StorageClass("fast", true) }
