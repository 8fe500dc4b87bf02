package main

import (
	"slices"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// TestFirstSteps: each re-create pairs with the controller's first claim
// write after it; the first create, others' claim writes and the
// controller's later writes do not count, and a re-create without a
// write before the next is left out.
func TestFirstSteps(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) metav1.MicroTime {
		return metav1.NewMicroTime(t0.Add(time.Duration(ms) * time.Millisecond))
	}
	ev := func(resource, verb, user string, received, answered int) auditv1.Event {
		return auditv1.Event{
			ObjectRef: &auditv1.ObjectReference{Resource: resource}, Verb: verb, User: authnv1.UserInfo{Username: user},
			RequestReceivedTimestamp: at(received), StageTimestamp: at(answered),
		}
	}
	const me, admin, kcm = "system:serviceaccount:kube-system:claimwarden", "admin", "system:kube-controller-manager"
	events := []auditv1.Event{
		ev("statefulsets", "create", admin, 0, 5),             // the creation, no change
		ev("persistentvolumeclaims", "patch", me, 50, 60),     // not a first step
		ev("statefulsets", "delete", admin, 100, 105),         //
		ev("statefulsets", "create", admin, 110, 120),         // round 1
		ev("persistentvolumeclaims", "update", kcm, 130, 131), // not the controller's
		ev("persistentvolumeclaims", "patch", me, 200, 210),   // 200 - 120 = 80 ms
		ev("persistentvolumeclaims", "patch", me, 300, 310),   // a later step
		ev("statefulsets", "create", admin, 400, 410),         // round 2: nothing before round 3
		ev("statefulsets", "create", admin, 500, 520),         // round 3
		ev("persistentvolumeclaims", "patch", me, 1520, 1530), // 1000 ms
	}
	got := firstSteps(events, me)
	want := []time.Duration{80 * time.Millisecond, time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("firstSteps = %v, want %v", got, want)
	}
}
