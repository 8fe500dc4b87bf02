package converge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	stsName  = "web"
	replicas = 3
	// storageClass names no StorageClass object: the PVs below are pre-bound
	// through claimRef, so the PV binder needs no provisioner, and the
	// scheduler sees bound claims it can place on the kwok node.
	storageClass = "manual"
)

// testKey seals the journal of every Converger in these tests; a
// "restarted" Converger holds the same key, as the controller reads it
// from its Secret again.
var testKey = []byte("0123456789abcdef0123456789abcdef")

func staticKey(context.Context) ([]byte, error) { return testKey, nil }

// ctxFor bounds one test; the whole file of scenarios takes well under it.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// namespaceFor gives each test its own namespace so that tests share one
// control plane without seeing each other's objects.
func namespaceFor(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))[:min(40, len(t.Name()))] + "-",
		Labels:       map[string]string{"test": "converge"},
	}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// manifest is the StatefulSet as a Git repository holds it: no defaults, no
// status. Only the template's storage request varies between revisions.
func manifest(ns, storage string) *appsv1.StatefulSet {
	labels := map[string]string{"app": stsName}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: stsName, Namespace: ns, Labels: labels,
			Annotations: map[string]string{"example.com/owner": "team-a"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](replicas),
			ServiceName: stsName,
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "registry.example/app:1",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr.To(storageClass),
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse(storage)}},
				},
			}},
		},
	}
}

// createPVs pre-creates one PV per ordinal, reserved for its claim by claimRef.
// PVCs of a class without a provisioner would stay Pending and their Pods
// unschedulable; reserved PVs are bound by the real PV binder within a second.
// PVs are cluster-scoped, so their names carry the namespace.
func createPVs(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	for i := range replicas {
		claim := fmt.Sprintf("data-%s-%d", stsName, i)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + claim},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName:              storageClass,
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claim},
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + ns + "/" + claim}},
			},
		}
		if err := c.Create(ctx, pv); err != nil {
			t.Fatal(err)
		}
	}
}

// readyStatefulSet creates PVs and the StatefulSet and waits until it is
// fully Ready on the kwok node. It returns the live object.
func readyStatefulSet(ctx context.Context, t *testing.T, c client.Client, ns string) *appsv1.StatefulSet {
	t.Helper()
	createPVs(ctx, t, c, ns)
	if err := c.Create(ctx, manifest(ns, "1Gi"), client.FieldOwner("kustomize-controller")); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	var sts appsv1.StatefulSet
	poll(ctx, t, 90*time.Second, "statefulset Ready", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key(ns), &sts); err != nil {
			return false, err
		}
		return sts.Status.ObservedGeneration == sts.Generation && sts.Status.ReadyReplicas == replicas &&
			sts.Status.CurrentRevision == sts.Status.UpdateRevision, nil
	})
	t.Logf("3/3 Ready %s after create", time.Since(began).Round(time.Millisecond))
	return &sts
}

func key(ns string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: stsName} }

// poll calls cond every 50 ms until it is true or `within` has passed; an error
// from cond is remembered and reported on timeout, not fatal at once, since a
// controller may be mid-way.
func poll(ctx context.Context, t *testing.T, within time.Duration, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, within, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

func key2meta(ns string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: stsName} }
