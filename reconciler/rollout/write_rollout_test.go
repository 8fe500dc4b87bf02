package rollout_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
)

// A reconcile on a copy of the rollout that the cache serves from before
// our last write does not write again what that write holds: neither the
// owner reference nor a status that differs only in its transition times.
// A new status is written; and a process that did not make the last write
// still sends the owner reference (it cannot tell), but not the status the
// server's answer to that shows it already has.
func TestRolloutWritesNothingItsLastWriteHolds(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	// The owner must exist, or the garbage collector removes the rollout.
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	stale := &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lagging"}}
	if err := c.Create(ctx, stale); err != nil {
		t.Fatal(err)
	}
	log := &clientLog{lists: map[string][]listed{}, wrote: map[string]map[string]int{}}
	logged := loggedClient{Client: c, log: log}
	write := rollout.RolloutWriter(logged)
	metaKey, statusKey := "patch *v1alpha1.VolumeClaimRollout/"+stale.Name, "status patch *v1alpha1.VolumeClaimRollout/"+stale.Name
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	reconciled := func(progress string, at time.Time) *v1alpha1.VolumeClaimRollout {
		after := stale.DeepCopy()
		after.OwnerReferences = []metav1.OwnerReference{ref}
		after.Status.Progress = progress
		after.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Progressing",
			Message: progress, LastTransitionTime: metav1.NewTime(at)}}
		return after
	}
	writes := func(w func(context.Context, *v1alpha1.VolumeClaimRollout, *v1alpha1.VolumeClaimRollout) error,
		why string, before, after *v1alpha1.VolumeClaimRollout, meta, status int) {
		t.Helper()
		w0 := log.writesIn(ns)
		if err := w(ctx, before.DeepCopy(), after); err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		w1 := log.writesIn(ns)
		if m, s := w1[metaKey]-w0[metaKey], w1[statusKey]-w0[statusKey]; m != meta || s != status {
			t.Errorf("%s: %d metadata and %d status patches, want %d and %d", why, m, s, meta, status)
		}
	}
	now := time.Now().Truncate(time.Second)

	writes(write, "first reconcile", stale, reconciled("patching data-0", now), 1, 1)
	writes(write, "the same on the cache's old copy, a second later", stale, reconciled("patching data-0", now.Add(time.Second)), 0, 0)
	writes(write, "a new status on the cache's old copy", stale, reconciled("resized data-0", now), 0, 1)
	writes(write, "that status again on the old copy", stale, reconciled("resized data-0", now.Add(2*time.Second)), 0, 0)
	writes(rollout.RolloutWriter(logged), "another process on the old copy", stale, reconciled("resized data-0", now), 1, 0)

	var got v1alpha1.VolumeClaimRollout
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: stale.Name}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != owner.UID || got.Status.Progress != "resized data-0" {
		t.Errorf("rollout holds owners %v and progress %q, want the ConfigMap and %q", got.OwnerReferences, got.Status.Progress, "resized data-0")
	}
	fresh := got.DeepCopy()
	fresh.Status.Progress = "done"
	writes(write, "a new status on the server's copy", &got, fresh, 0, 1)
}
