package plan

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

var stsCreated = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func onDeleteSet(strategy appsv1.StatefulSetUpdateStrategyType, updateRevision string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "web", CreationTimestamp: metav1.NewTime(stsCreated)},
		Spec:       appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: strategy}},
		Status:     appsv1.StatefulSetStatus{UpdateRevision: updateRevision},
	}
}

func podMeta(name, uid string, created time.Time, revision string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, UID: types.UID(uid), CreationTimestamp: metav1.NewTime(created)}
	if revision != "" {
		m.Labels = map[string]string{appsv1.ControllerRevisionHashLabelKey: revision}
	}
	return m
}

func TestOnDeleteOf(t *testing.T) {
	before, same, after := stsCreated.Add(-time.Hour), stsCreated, stsCreated.Add(time.Second)
	deleting := podMeta("web-3", "d", before, "")
	deleting.DeletionTimestamp = &metav1.Time{Time: after}
	pods := []metav1.ObjectMeta{
		podMeta("web-0", "a", before, "web-1"),  // older than the templates
		podMeta("web-1", "b", same, "web-1"),    // in their second: old
		podMeta("web-2", "c", after, "web-1"),   // re-created since
		deleting,                                // being deleted: the claim may go
		podMeta("web-4", "e", after, "web-0"),   // new, but on another revision
		podMeta("web-01", "f", before, "web-1"), // not a Pod of web
		podMeta("webx-0", "g", before, "web-1"), // nor this
	}
	d := OnDeleteOf(onDeleteSet(appsv1.OnDeleteStatefulSetStrategyType, "web-1"), pods, nil)
	want := map[int32]PodRef{0: {"web-0", "a"}, 1: {"web-1", "b"}, 4: {"web-4", "e"}}
	if len(d.Old) != len(want) {
		t.Fatalf("old %v, want %v", d.Old, want)
	}
	for o, p := range want {
		if d.Old[o] != p {
			t.Errorf("ordinal %d: %v, want %v", o, d.Old[o], p)
		}
	}

	// A Pod found old stays old while it keeps its UID; re-created in the
	// StatefulSet's second, it is new, and stays new once its predecessor's
	// deletion is over.
	sts := onDeleteSet(appsv1.OnDeleteStatefulSetStrategyType, "web-1")
	deleted := podMeta("web-1", "b", same, "web-1")
	deleted.DeletionTimestamp = &metav1.Time{Time: after}
	steps := [][]metav1.ObjectMeta{
		{podMeta("web-0", "a", before, "web-1"), deleted},                               // web-1 being deleted
		{podMeta("web-0", "a", before, "web-1")},                                        // gone
		{podMeta("web-0", "a", before, "web-1"), podMeta("web-1", "b2", same, "web-1")}, // back, same second
		{podMeta("web-0", "a", before, "web-1"), podMeta("web-1", "b2", same, "web-1")}, // and later
	}
	for i, pods := range steps {
		d = OnDeleteOf(sts, pods, d.Seen)
		if _, ok := d.Old[1]; ok || d.Old[0].UID != "a" || len(d.Old) != 1 {
			t.Errorf("step %d: old %v, want only web-0", i, d.Old)
		}
	}

	if d := OnDeleteOf(onDeleteSet(appsv1.RollingUpdateStatefulSetStrategyType, "web-1"), pods, nil); len(d.Old) != 0 {
		t.Errorf("RollingUpdate: old %v, want none", d.Old)
	}
	if d := OnDeleteOf(onDeleteSet("", "web-1"), pods, nil); len(d.Old) != 0 {
		t.Errorf("default strategy: old %v, want none", d.Old)
	}
}

// Only the claims whose Pod was re-created are patched; the others wait,
// naming their Pod, and the plan says it waits for Pods, not that it is blocked.
func TestBuildOnDelete(t *testing.T) {
	od := OnDelete{Old: map[int32]PodRef{0: {"web-0", "a"}, 1: {"web-1", "b"}}}
	r := claims(claim("data", 0, "grow"), claim("data", 1, "grow"), claim("data", 2, "grow"), claim("logs", 1, "grow"))
	p := Build(r, Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 3, OnDelete: od})
	if len(p.Patch) != 1 || p.Patch[0].Name != "data-web-2" {
		t.Fatalf("patch %v, want only data-web-2", p.Patch)
	}
	for _, i := range []int{0, 1, 3} {
		s := p.Steps[i]
		pod := "web-" + s.Claim.Name[len(s.Claim.Name)-1:]
		if s.Phase != v1alpha1.ClaimPending || !strings.Contains(s.Message, "Pod "+pod+" is older than the templates") {
			t.Errorf("%s: %s %q, want Pending naming Pod %s", s.Claim.Name, s.Phase, s.Message, pod)
		}
	}
	if want := "updateStrategy OnDelete holds 3 claim(s) until their Pods are deleted: web-0, web-1"; p.WaitingForPods != want {
		t.Errorf("WaitingForPods %q, want %q", p.WaitingForPods, want)
	}
	if p.Blocked != "" || p.Held != "" {
		t.Errorf("blocked %q, held %q: want neither", p.Blocked, p.Held)
	}
	if note := od.HeldNote(r); note != p.WaitingForPods {
		t.Errorf("HeldNote %q, want what the plan says", note)
	}

	// Compatible claims and failures are what they are, whatever the Pod.
	p = Build(claims(claim("data", 0, "compatible"), claim("data", 1, "failed")), Options{Strategy: v1alpha1.InPlace, OnDelete: od})
	if p.Steps[0].Phase != v1alpha1.ClaimCompatible || p.Steps[1].Phase != v1alpha1.ClaimFailed || p.WaitingForPods != "" {
		t.Errorf("steps %+v, waiting %q", p.Steps, p.WaitingForPods)
	}
}

func TestOnDeleteNote(t *testing.T) {
	r := claims(claim("data", 0, "grow"), claim("data", 1, "compatible"), claim("data", 2, "grow"))
	if got, want := OnDeleteNote(onDeleteSet(appsv1.OnDeleteStatefulSetStrategyType, ""), r), "updateStrategy OnDelete holds 2 claim(s) until their Pods are deleted: web-0, web-2"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := OnDeleteNote(onDeleteSet(appsv1.RollingUpdateStatefulSetStrategyType, ""), r); got != "" {
		t.Errorf("RollingUpdate: note %q", got)
	}
}
