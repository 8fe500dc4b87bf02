package benchkit

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// Ready replicas count only for a StatefulSet's current generation, Bound
// claims only in the namespaces kept.
func TestSettled(t *testing.T) {
	sts := func(ns string, gen, observed int64, ready int32) client.Object {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", Generation: gen},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: observed, ReadyReplicas: ready}}
	}
	pvc := func(ns, name string, phase corev1.PersistentVolumeClaimPhase) client.Object {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	}
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(
		sts("run-a", 1, 1, 2), sts("run-b", 2, 1, 3), sts("other", 1, 1, 5),
		pvc("run-a", "a", corev1.ClaimBound), pvc("run-a", "b", corev1.ClaimPending), pvc("other", "c", corev1.ClaimBound),
	).Build()
	ready, bound, err := Settled(context.Background(), c, func(ns string) bool { return strings.HasPrefix(ns, "run-") })
	if err != nil || ready != 2 || bound != 1 {
		t.Errorf("Settled = %d ready, %d bound, %v; want 2 (run-b's generation not observed), 1", ready, bound, err)
	}
	if ready, bound, _ = Settled(context.Background(), c, nil); ready != 7 || bound != 2 {
		t.Errorf("every namespace: %d ready, %d bound; want 7, 2", ready, bound)
	}
}
