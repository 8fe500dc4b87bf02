package storagesim

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// simDelay is the simulated storage speed in the integration test.
const simDelay = 2 * time.Second

// settle bounds how long the real control plane plus the simulator may take
// beyond simDelay; generous because CI machines are slow.
const settle = 30 * time.Second

// TestStorageSimulator runs the simulator against a real control plane
// (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok): every
// status it writes passes the real API server's validation, and binding is
// done by the real PV binder.
func TestStorageSimulator(t *testing.T) {
	began := time.Now()
	k := startCluster(t, simDelay)
	k.create(t, StorageClass("sim-fast", true))
	t.Cleanup(func() { t.Logf("integration test took %v", time.Since(began).Round(time.Millisecond)) })

	t.Run("provisioned volume is bound by the real PV binder", func(t *testing.T) { testProvision(t, k) })
	t.Run("resize grows capacity only after the delay", func(t *testing.T) { testResize(t, k) })
	t.Run("FailResize reports an error until ClearFailure", func(t *testing.T) { testFailResize(t, k) })
	t.Run("fail-resize annotation reports an error until removed", func(t *testing.T) { testFailAnnotation(t, k) })
	t.Run("concurrent resizes proceed independently", func(t *testing.T) { testConcurrent(t, k) })
	t.Run("offline resize grows the file system only in a new Pod", func(t *testing.T) { testOffline(t, k) })
	t.Run("volume attributes class is applied after the delay", func(t *testing.T) { testModify(t, k) })
	t.Run("wait for first consumer provisions once a node is selected", func(t *testing.T) { testWaitForFirstConsumer(t, k) })
	t.Run("released volume is deleted", func(t *testing.T) { testDeleteReleased(t, k) })
}

func testProvision(t *testing.T, k *cluster) {
	k.newClaim(t, "data", "sim-fast", "1Gi")
	pvc := k.waitBound(t, "data")
	if pvc.Spec.VolumeName != "pvc-"+string(pvc.UID) {
		t.Errorf("volumeName %q, want pvc-<uid>", pvc.Spec.VolumeName)
	}
	// bind-completed is written only by kube-controller-manager's binder, never by the simulator.
	if pvc.Annotations["pv.kubernetes.io/bind-completed"] != "yes" {
		t.Errorf("claim annotations %v: not bound by the PV binder", pvc.Annotations)
	}
	if err := capacityIs(pvc, "1Gi"); err != nil {
		t.Error(err)
	}
	pv := k.volume(t, pvc.Spec.VolumeName)
	if pv.Status.Phase != corev1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
		t.Errorf("volume phase %q claimRef %+v", pv.Status.Phase, pv.Spec.ClaimRef)
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != DefaultProvisioner || pv.Annotations[annProvisionedBy] != DefaultProvisioner {
		t.Errorf("volume source %+v annotations %v", pv.Spec.CSI, pv.Annotations)
	}
}

// growAndWatch raises the claim's request and waits for the capacity, failing
// if it is ever seen grown before simDelay has passed. It reports whether
// ControllerResizeInProgress was seen meanwhile and how long growth took.
func growAndWatch(t *testing.T, k *cluster, name, size string) (sawInProgress bool, took time.Duration) {
	t.Helper()
	start := time.Now()
	k.request(t, name, size)
	within(t, simDelay+settle, name+" grown to "+size, func() error {
		pvc := k.claim(t, name)
		if err := capacityIs(pvc, size); err != nil {
			sawInProgress = sawInProgress ||
				pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage] == corev1.PersistentVolumeClaimControllerResizeInProgress
			return err
		}
		if e := time.Since(start); e < simDelay {
			t.Fatalf("%s grown after %v, before the %v delay", name, e, simDelay)
		}
		return nil
	})
	return sawInProgress, time.Since(start)
}

// assertResized checks every trace of a finished resize to size.
func assertResized(t *testing.T, k *cluster, name, size string) {
	t.Helper()
	pvc := k.claim(t, name)
	if got := storageOf(pvc.Status.AllocatedResources); got != size {
		t.Errorf("allocatedResources %s, want %s", got, size)
	}
	if _, ok := pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; ok {
		t.Errorf("allocatedResourceStatuses left: %v", pvc.Status.AllocatedResourceStatuses)
	}
	// Other controllers add conditions too (kube-controller-manager 1.37 sets
	// Unused), so only the resize ones must be gone.
	for _, c := range pvc.Status.Conditions {
		switch c.Type {
		case corev1.PersistentVolumeClaimResizing, corev1.PersistentVolumeClaimControllerResizeError,
			corev1.PersistentVolumeClaimFileSystemResizePending, corev1.PersistentVolumeClaimNodeResizeError:
			t.Errorf("resize condition left: %+v", c)
		}
	}
	if got := storageOf(k.volume(t, pvc.Spec.VolumeName).Spec.Capacity); got != size {
		t.Errorf("volume capacity %s, want %s", got, size)
	}
}

func testResize(t *testing.T, k *cluster) {
	k.newClaim(t, "grow", "sim-fast", "1Gi")
	k.waitBound(t, "grow")
	saw, took := growAndWatch(t, k, "grow", "2Gi")
	if !saw {
		t.Error("ControllerResizeInProgress never seen while waiting")
	}
	assertResized(t, k, "grow", "2Gi")
	// Events are what people (and claimwarden's reports) see, as with the real resizer.
	for _, reason := range []string{"Resizing", "VolumeResizeSuccessful"} {
		within(t, settle, reason+" event", func() error { return k.eventSeen("grow", reason) })
	}
	t.Logf("grown %v after the request (delay %v)", took.Round(time.Millisecond), simDelay)
}

// waitResizeError waits for the injected failure to be reported, then checks
// that it sticks without growing anything for longer than an attempt takes.
func waitResizeError(t *testing.T, k *cluster, name, msg, oldSize string) {
	t.Helper()
	check := func() error {
		pvc := k.claim(t, name)
		if err := capacityIs(pvc, oldSize); err != nil {
			return fmt.Errorf("failed resize changed the claim: %w", err)
		}
		if got := storageOf(k.volume(t, pvc.Spec.VolumeName).Spec.Capacity); got != oldSize {
			return fmt.Errorf("failed resize changed the volume to %s", got)
		}
		if st := pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; st != corev1.PersistentVolumeClaimControllerResizeInfeasible {
			return fmt.Errorf("allocatedResourceStatuses[storage] = %q", st)
		}
		for _, c := range pvc.Status.Conditions {
			if c.Type == corev1.PersistentVolumeClaimControllerResizeError && c.Status == corev1.ConditionTrue && c.Message == msg {
				return nil
			}
		}
		return fmt.Errorf("no ControllerResizeError %q in %+v", msg, pvc.Status.Conditions)
	}
	within(t, simDelay+settle, name+" resize error reported", check)
	throughout(t, simDelay+time.Second, name+" resize error sticks", check)
}

func testFailResize(t *testing.T, k *cluster) {
	k.newClaim(t, "broken", "sim-fast", "1Gi")
	k.waitBound(t, "broken")
	const msg = "simulated: backend out of capacity"
	k.sim.FailResize(k.ns, "broken", msg)
	k.request(t, "broken", "2Gi")
	waitResizeError(t, k, "broken", msg, "1Gi")
	within(t, settle, "VolumeResizeFailed event", func() error { return k.eventSeen("broken", "VolumeResizeFailed") })

	k.sim.ClearFailure(k.ns, "broken")
	within(t, simDelay+settle, "grown after ClearFailure", func() error { return capacityIs(k.claim(t, "broken"), "2Gi") })
	assertResized(t, k, "broken", "2Gi")
}

func testFailAnnotation(t *testing.T, k *cluster) {
	k.newClaim(t, "quota", "sim-fast", "1Gi")
	k.waitBound(t, "quota")
	const msg = "simulated: quota exceeded"
	k.patchClaim(t, "quota", fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, FailResizeAnnotation, msg))
	k.request(t, "quota", "3Gi")
	waitResizeError(t, k, "quota", msg, "1Gi")

	k.patchClaim(t, "quota", fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, FailResizeAnnotation))
	within(t, simDelay+settle, "grown after removing the annotation", func() error { return capacityIs(k.claim(t, "quota"), "3Gi") })
	assertResized(t, k, "quota", "3Gi")
}

func testConcurrent(t *testing.T, k *cluster) {
	names := []string{"par-0", "par-1", "par-2"}
	for _, n := range names {
		k.newClaim(t, n, "sim-fast", "1Gi")
	}
	for _, n := range names {
		k.waitBound(t, n)
	}
	start := time.Now()
	for _, n := range names {
		k.request(t, n, "5Gi")
	}
	for _, n := range names {
		within(t, simDelay+settle, n+" grown", func() error { return capacityIs(k.claim(t, n), "5Gi") })
	}
	// One after the other would take at least 3×simDelay.
	if took := time.Since(start); took >= 2*simDelay {
		t.Errorf("3 resizes took %v; not concurrent (delay %v)", took, simDelay)
	} else {
		t.Logf("3 concurrent resizes took %v (delay %v)", took.Round(time.Millisecond), simDelay)
	}
}

func testModify(t *testing.T, k *cluster) {
	k.create(t, &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: "sim-gold"},
		DriverName: DefaultProvisioner,
		Parameters: map[string]string{"iops": "9000"},
	})
	k.newClaim(t, "tuned", "sim-fast", "1Gi")
	k.waitBound(t, "tuned")
	start := time.Now()
	k.patchClaim(t, "tuned", `{"spec":{"volumeAttributesClassName":"sim-gold"}}`)
	sawInProgress := false
	within(t, simDelay+settle, "class sim-gold current", func() error {
		pvc := k.claim(t, "tuned")
		if mvs := pvc.Status.ModifyVolumeStatus; mvs != nil && mvs.Status == corev1.PersistentVolumeClaimModifyVolumeInProgress &&
			mvs.TargetVolumeAttributesClassName == "sim-gold" {
			sawInProgress = true
		}
		if cur := ptr.Deref(pvc.Status.CurrentVolumeAttributesClassName, ""); cur != "sim-gold" {
			return fmt.Errorf("current class %q", cur)
		}
		if e := time.Since(start); e < simDelay {
			t.Fatalf("class applied after %v, before the %v delay", e, simDelay)
		}
		if pvc.Status.ModifyVolumeStatus != nil {
			return fmt.Errorf("modifyVolumeStatus %+v left", pvc.Status.ModifyVolumeStatus)
		}
		return nil
	})
	if !sawInProgress {
		t.Error("modifyVolumeStatus InProgress never seen while waiting")
	}
	pv := k.volume(t, k.claim(t, "tuned").Spec.VolumeName)
	if got := ptr.Deref(pv.Spec.VolumeAttributesClassName, ""); got != "sim-gold" {
		t.Errorf("volume class %q, want sim-gold", got)
	}
}

func testWaitForFirstConsumer(t *testing.T, k *cluster) {
	class := StorageClass("sim-late", true)
	class.VolumeBindingMode = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
	k.create(t, class)
	k.newClaim(t, "late", "sim-late", "1Gi")
	throughout(t, time.Second, "no volume without a consumer", func() error {
		if pvc := k.claim(t, "late"); pvc.Spec.VolumeName != "" {
			return fmt.Errorf("provisioned %s before any pod used the claim", pvc.Spec.VolumeName)
		}
		return nil
	})
	k.create(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: "consumer"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "late"}}}},
		},
	})
	pvc := k.waitBound(t, "late")
	if node := pvc.Annotations[annSelectedNode]; node != k.env.NodeName {
		t.Errorf("selected node %q, want the kwok node %q", node, k.env.NodeName)
	}
	within(t, settle, "consumer pod scheduled", func() error {
		var pod corev1.Pod
		if err := k.c.Get(context.Background(), client.ObjectKey{Namespace: k.ns, Name: "consumer"}, &pod); err != nil {
			return err
		}
		if pod.Spec.NodeName == "" {
			return fmt.Errorf("pod not scheduled")
		}
		return nil
	})
}

func testDeleteReleased(t *testing.T, k *cluster) {
	k.newClaim(t, "gone", "sim-fast", "1Gi")
	pv := k.waitBound(t, "gone").Spec.VolumeName
	if err := k.c.Delete(context.Background(), k.claim(t, "gone")); err != nil {
		t.Fatal(err)
	}
	within(t, settle, "released volume deleted", func() error {
		err := k.c.Get(context.Background(), client.ObjectKey{Name: pv}, &corev1.PersistentVolume{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("volume %s still exists (err %v)", pv, err)
	})
}

// testOffline: the real API server accepts every status of an offline
// expansion, and the file system grows only once the Pod kwok runs with the
// claim is replaced by another.
func testOffline(t *testing.T, k *cluster) {
	k.newClaim(t, "offline", "sim-fast", "1Gi")
	k.patchClaim(t, "offline", fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, OfflineResizeAnnotation))
	k.waitBound(t, "offline")
	first := k.runPod(t, "offline-0", "offline")
	k.request(t, "offline", "2Gi")
	within(t, simDelay+settle, "file system resize pending", func() error {
		pvc := k.claim(t, "offline")
		if st := pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; st != corev1.PersistentVolumeClaimNodeResizePending {
			return fmt.Errorf("allocatedResourceStatuses[storage] = %q", st)
		}
		return nil
	})
	if got := storageOf(k.volume(t, k.claim(t, "offline").Spec.VolumeName).Spec.Capacity); got != "2Gi" {
		t.Errorf("volume capacity %s, want 2Gi once the controller expansion is done", got)
	}
	throughout(t, 2*simDelay, "capacity while the Pod runs", func() error { return capacityIs(k.claim(t, "offline"), "1Gi") })

	k.deletePod(t, first)
	second := k.runPod(t, "offline-0", "offline")
	if second.UID == first.UID {
		t.Fatalf("Pod %s kept its UID %s", second.Name, second.UID)
	}
	within(t, settle, "grown after the remount", func() error { return capacityIs(k.claim(t, "offline"), "2Gi") })
	assertResized(t, k, "offline", "2Gi")
	within(t, settle, "FileSystemResizeSuccessful event", func() error { return k.eventSeen("offline", "FileSystemResizeSuccessful") })
}
