package storagesim

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func pendingClaim(class string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-web-0", UID: "uid-9"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName:          ptr.To(class),
			AccessModes:               []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			VolumeMode:                ptr.To(corev1.PersistentVolumeBlock),
			VolumeAttributesClassName: ptr.To("gold"),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

func TestProvisionCreatesPreBoundVolume(t *testing.T) {
	class := StorageClass("fast", true)
	class.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRetain)
	pvc := pendingClaim("fast")
	s, _ := newFakeSim(t, class, pvc)
	reconcileClaim(t, s, client.ObjectKeyFromObject(pvc))

	var pv corev1.PersistentVolume
	if err := s.Client.Get(context.Background(), client.ObjectKey{Name: "pvc-uid-9"}, &pv); err != nil {
		t.Fatalf("volume pvc-<uid> not created: %v", err)
	}
	ref := pv.Spec.ClaimRef
	switch {
	case storageOf(pv.Spec.Capacity) != "5Gi":
		t.Errorf("capacity %s, want the request 5Gi", storageOf(pv.Spec.Capacity))
	case ref == nil || ref.Namespace != "ns" || ref.Name != "data-web-0" || ref.UID != "uid-9":
		t.Errorf("claimRef %+v does not pin the claim by UID", ref)
	case pv.Spec.CSI == nil || pv.Spec.CSI.Driver != DefaultProvisioner || pv.Spec.CSI.VolumeHandle == "":
		t.Errorf("CSI source %+v", pv.Spec.CSI)
	case pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain:
		t.Errorf("reclaim policy %s, want the class's Retain", pv.Spec.PersistentVolumeReclaimPolicy)
	case pv.Spec.StorageClassName != "fast" || ptr.Deref(pv.Spec.VolumeMode, "") != corev1.PersistentVolumeBlock ||
		len(pv.Spec.AccessModes) != 1 || pv.Spec.AccessModes[0] != corev1.ReadWriteOncePod:
		t.Errorf("class/mode/access not copied: %+v", pv.Spec)
	case ptr.Deref(pv.Spec.VolumeAttributesClassName, "") != "gold":
		t.Errorf("volumeAttributesClassName %v, want gold (the PV binder matches it)", pv.Spec.VolumeAttributesClassName)
	case pv.Annotations[annProvisionedBy] != DefaultProvisioner:
		t.Errorf("annotations %v", pv.Annotations)
	}
	// A second look (stale cache) must not fail on the existing volume.
	reconcileClaim(t, s, client.ObjectKeyFromObject(pvc))
}

func TestProvisionSkipsOtherClassesAndProvisioners(t *testing.T) {
	other := StorageClass("other", true)
	other.Provisioner = "ebs.csi.aws.com"
	foreign := pendingClaim("other")
	claimed := pendingClaim("fast")
	claimed.Name, claimed.UID = "claimed", "uid-10"
	claimed.Annotations = map[string]string{annStorageProvisioner: "someone-else"}
	s, _ := newFakeSim(t, other, StorageClass("fast", true), foreign, claimed)
	reconcileClaim(t, s, client.ObjectKeyFromObject(foreign))
	reconcileClaim(t, s, client.ObjectKeyFromObject(claimed))
	var pvs corev1.PersistentVolumeList
	if err := s.Client.List(context.Background(), &pvs); err != nil {
		t.Fatal(err)
	}
	if len(pvs.Items) != 0 {
		t.Fatalf("provisioned for a claim that is not ours: %s", pvs.Items[0].Name)
	}
}

func TestProvisionWaitsForFirstConsumer(t *testing.T) {
	class := StorageClass("late", true)
	class.VolumeBindingMode = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
	pvc := pendingClaim("late")
	s, _ := newFakeSim(t, class, pvc)
	key := client.ObjectKeyFromObject(pvc)
	reconcileClaim(t, s, key)
	var pv corev1.PersistentVolume
	if err := s.Client.Get(context.Background(), client.ObjectKey{Name: "pvc-uid-9"}, &pv); err == nil {
		t.Fatal("provisioned before the scheduler selected a node")
	}
	got := getClaim(t, s, key)
	got.Annotations = map[string]string{annSelectedNode: "kwok-node-0"}
	if err := s.Client.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	reconcileClaim(t, s, key)
	if err := s.Client.Get(context.Background(), client.ObjectKey{Name: "pvc-uid-9"}, &pv); err != nil {
		t.Fatalf("not provisioned after node selection: %v", err)
	}
}

func TestReleasedVolumesAreDeletedPerReclaimPolicy(t *testing.T) {
	_, del := boundPair()
	del.Status.Phase = corev1.VolumeReleased
	del.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	_, keep := boundPair()
	keep.Name = "pvc-keep"
	keep.Status.Phase = corev1.VolumeReleased
	keep.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	s, _ := newFakeSim(t, del, keep)
	for _, name := range []string{del.Name, keep.Name} {
		if _, err := s.reconcileVolume(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	var pv corev1.PersistentVolume
	if err := s.Client.Get(context.Background(), client.ObjectKey{Name: del.Name}, &pv); err == nil {
		t.Error("released volume with policy Delete still exists")
	}
	if err := s.Client.Get(context.Background(), client.ObjectKey{Name: keep.Name}, &pv); err != nil {
		t.Errorf("released volume with policy Retain was deleted: %v", err)
	}
}
