package policies

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// engDefaults is a small fixed default set for tests that are not about
// the shipped policies: it denies shrinking, like increase-only.
var engDefaults = fstest.MapFS{
	"shrink.rego": {Data: []byte(`package claimwarden.claims

deny contains {"policy": "test-shrink", "msg": "shrinks"} if {
	input.change.storage.toBytes < input.change.storage.fromBytes
}
`)},
}

// engNew starts an engine with o (defaults engDefaults unless set) and
// stops it when the test ends.
func engNew(t testing.TB, o Options) *Engine {
	t.Helper()
	if o.defaults == nil {
		o.defaults = engDefaults
	}
	e, err := New(context.Background(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(e.Stop)
	return e
}

const gi = int64(1) << 30

// engInput is a claim change of data-db-<ordinal> in StatefulSet shop/db
// from fromGi to toGi, with live objects the size the controller sends.
func engInput(ordinal int32, fromGi, toGi int64) Input {
	from := resource.NewQuantity(fromGi*gi, resource.BinarySI)
	to := resource.NewQuantity(toGi*gi, resource.BinarySI)
	claim := fmt.Sprintf("data-db-%d", ordinal)
	template := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"app": "db"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("fast"),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: *to}},
		},
	}
	pvc := template.DeepCopy()
	pvc.Name, pvc.Namespace = claim, "shop"
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = *from
	pvc.Spec.VolumeName = "pvc-" + claim
	pvc.Status = corev1.PersistentVolumeClaimStatus{
		Phase:       corev1.ClaimBound,
		AccessModes: pvc.Spec.AccessModes,
		Capacity:    corev1.ResourceList{corev1.ResourceStorage: *from},
	}
	return Input{
		Change: Change{
			Kind: KindClaim, Namespace: "shop", StatefulSet: "db", Claim: claim, Template: "data", Ordinal: ordinal,
			Storage: &QuantityChange{
				From: from.String(), To: to.String(), FromBytes: from.Value(), ToBytes: to.Value(),
			},
			StorageClassName: &StringChange{From: "fast", To: "fast"},
		},
		PVC: pvc,
		StorageClass: &storagev1.StorageClass{
			ObjectMeta:           metav1.ObjectMeta{Name: "fast"},
			Provisioner:          "ebs.csi.aws.com",
			Parameters:           map[string]string{"type": "gp3"},
			AllowVolumeExpansion: ptr.To(true),
		},
		Template:    &template,
		StatefulSet: engStatefulSet(template),
		Namespace:   &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"tier": "prod"}}},
		Source: Source{
			Kind: "Kustomization", Namespace: "flux-system", Name: "apps",
			Repository: "https://git.example.com/org/apps.git", Revision: "main@sha1:0123456789abcdef",
		},
	}
}

// engStatefulSet is a database StatefulSet with a realistic Pod template.
func engStatefulSet(template corev1.PersistentVolumeClaim) *appsv1.StatefulSet {
	labels := map[string]string{"app": "db"}
	return &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](3),
			ServiceName: "db",
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "postgres",
					Image: "postgres:17.2",
					Ports: []corev1.ContainerPort{{Name: "pg", ContainerPort: 5432}},
					Env: []corev1.EnvVar{
						{Name: "PGDATA", Value: "/var/lib/postgresql/data/pgdata"},
						{Name: "POSTGRES_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
							LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}},
					},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/postgresql/data"}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("pg")}}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{template},
		},
	}
}

// engWait polls cond until it holds or the deadline passes.
func engWait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// engDenied returns the verdict's denial messages as "policy: msg".
func engDenied(v Verdict) string { return strings.Join(messages(v.Denials), " | ") }

// engDrain empties Changes so that a later signal can be attributed.
func engDrain(e *Engine) {
	select {
	case <-e.Changes():
	default:
	}
}

// engSignalled reports whether Changes holds a signal, consuming it.
func engSignalled(e *Engine) bool {
	select {
	case <-e.Changes():
		return true
	default:
		return false
	}
}
