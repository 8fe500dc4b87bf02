package storagesim

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// Helpers for the integration test against a real control plane.

// cluster is a real control plane with a running simulator.
type cluster struct {
	env *testenv.Env
	c   client.Client
	sim *Simulator
	ns  string
}

// startCluster starts the control plane (kube-controller-manager's PV binder
// is what binds the simulated volumes) and the simulator, both stopped in
// t.Cleanup, simulator first.
func startCluster(t *testing.T, delay time.Duration) *cluster {
	t.Helper()
	// Warnings and errors only: -v output stays readable, failures stay visible.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.WarnLevel)))
	env := testenv.StartT(t, testenv.Options{Controllers: true, Kwok: true})
	t.Logf("control plane ready in %v", env.StartupTime.Round(time.Millisecond))

	c := testenv.Client(t, env.Config)
	sim := &Simulator{Delay: delay}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sim.Start(ctx, env.Config) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("simulator: %v", err)
		}
	})

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "storagesim-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return &cluster{env: env, c: c, sim: sim, ns: ns.Name}
}

// within polls check every 50 ms until it returns nil, failing the test with
// check's last error once timeout has passed.
func within(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.After(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("%s: not reached within %v: %v", what, timeout, err)
		case <-tick.C:
		}
	}
}

// throughout checks every 50 ms for the whole window, failing at the first
// violation: an observation window, not a wait for something to happen.
func throughout(t *testing.T, window time.Duration, what string, check func() error) {
	t.Helper()
	end := time.After(window)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := check(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		select {
		case <-end:
			return
		case <-tick.C:
		}
	}
}

func (k *cluster) claim(t *testing.T, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	var pvc corev1.PersistentVolumeClaim
	if err := k.c.Get(context.Background(), types.NamespacedName{Namespace: k.ns, Name: name}, &pvc); err != nil {
		t.Fatal(err)
	}
	return &pvc
}

func (k *cluster) volume(t *testing.T, name string) *corev1.PersistentVolume {
	t.Helper()
	var pv corev1.PersistentVolume
	if err := k.c.Get(context.Background(), client.ObjectKey{Name: name}, &pv); err != nil {
		t.Fatal(err)
	}
	return &pv
}

func (k *cluster) create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k.c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

// newClaim creates a claim of class with the given request.
func (k *cluster) newClaim(t *testing.T, name, class, size string) {
	k.create(t, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(class),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	})
}

// waitBound waits until the real PV binder has bound the claim.
func (k *cluster) waitBound(t *testing.T, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	var pvc *corev1.PersistentVolumeClaim
	within(t, 30*time.Second, "claim "+name+" bound", func() error {
		pvc = k.claim(t, name)
		if pvc.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("phase %q", pvc.Status.Phase)
		}
		return nil
	})
	return pvc
}

// patchClaim applies a JSON merge patch to the claim's spec or metadata.
func (k *cluster) patchClaim(t *testing.T, name, patch string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: name}}
	if err := k.c.Patch(context.Background(), pvc, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func (k *cluster) request(t *testing.T, name, size string) {
	t.Helper()
	k.patchClaim(t, name, fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":%q}}}}`, size))
}

// eventSeen checks that an event with reason was recorded for the claim.
func (k *cluster) eventSeen(claim, reason string) error {
	var list eventsv1.EventList
	if err := k.c.List(context.Background(), &list, client.InNamespace(k.ns)); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.Regarding.Name == claim && e.Reason == reason {
			return nil
		}
	}
	return fmt.Errorf("no %s event for %s among %d events", reason, claim, len(list.Items))
}

// capacityIs checks the claim's status.capacity storage.
func capacityIs(pvc *corev1.PersistentVolumeClaim, size string) error {
	if got := storageOf(pvc.Status.Capacity); got != size {
		return fmt.Errorf("capacity %s, want %s", got, size)
	}
	return nil
}

// runPod creates a Pod using the claim and waits until kwok runs it.
func (k *cluster) runPod(t *testing.T, name, claim string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "db", Image: "registry.example/db:1",
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
		},
	}
	k.create(t, pod)
	within(t, settle, "Pod "+name+" running", func() error {
		if err := k.c.Get(context.Background(), client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		if pod.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %q", pod.Status.Phase)
		}
		return nil
	})
	return pod
}

// deletePod deletes the Pod and waits until it is gone.
func (k *cluster) deletePod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	if err := k.c.Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	within(t, settle, "Pod "+pod.Name+" gone", func() error {
		err := k.c.Get(context.Background(), client.ObjectKeyFromObject(pod), &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there")
	})
}
