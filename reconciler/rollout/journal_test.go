package rollout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// Someone who may write volumeclaimrollouts/status puts a privileged
// StatefulSet into status.pendingRecreate (the genuine record's UID, its own
// Pod template, no MAC) and the StatefulSet goes away: the controller creates
// nothing, the rollout is Stalled JournalRejected and a Warning event on the
// VolumeClaimRollout says how to recover.
func TestForgedJournalStallsTheRollout(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "forged", 1, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	var live appsv1.StatefulSet
	if err := c.Get(ctx, key, &live); err != nil {
		t.Fatal(err)
	}

	forged := converge.Prepare(&live)
	forged.Spec.Template.Spec.Containers[0].Image = "registry.example/miner:1"
	forged.Spec.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	raw, err := json.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	unsealed := v1alpha1.PendingRecreate{UID: string(live.UID), Object: runtime.RawExtension{Raw: raw}}
	vcr := &v1alpha1.VolumeClaimRollout{}
	if err := c.Get(ctx, key, vcr); err != nil {
		t.Fatal(err)
	}
	vcr.Status.PendingRecreate = &unsealed
	if err := c.Status().Update(ctx, vcr); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &live, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
		t.Fatal(err)
	}

	rejected := waitRollout(t, c, key, "Stalled JournalRejected", func(v *v1alpha1.VolumeClaimRollout) bool {
		s := conditions.Get(v, meta.StalledCondition)
		return s != nil && s.Reason == v1alpha1.ReasonJournalRejected
	})
	if msg := conditions.GetMessage(rejected, meta.StalledCondition); !strings.Contains(msg, "carries no MAC") || !strings.Contains(msg, "kubectl patch volumeclaimrollout -n "+ns+" forged") {
		t.Errorf("Stalled message %q does not say why and how to recover", msg)
	}
	if rejected.Status.PendingRecreate == nil {
		t.Error("the rejected record was dropped: a person can no longer see it")
	}
	ev := waitEvents(t, c, ns, v1alpha1.ReasonJournalRejected, 1)[0]
	if ev.Type != corev1.EventTypeWarning || ev.Regarding.Kind != "VolumeClaimRollout" || ev.Regarding.Name != "forged" {
		t.Errorf("event %s %s about %s %s, want a Warning about VolumeClaimRollout forged", ev.Type, ev.Reason, ev.Regarding.Kind, ev.Regarding.Name)
	}

	// The first refusal may come while the orphan delete is still under
	// way; once the old object is gone, a reconcile must not create one.
	err = wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		var cur appsv1.StatefulSet
		err := c.Get(ctx, key, &cur)
		if err == nil && cur.UID != live.UID {
			return false, fmt.Errorf("a StatefulSet was created from the forged record (image %s)", imageOf(&cur))
		}
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatal(err)
	}
	reconciles := counter(t, "controller_runtime_reconcile_total", "controller", "volumeclaimrollout")
	owner := proposal.Owner{Kind: "Kustomization", Namespace: ns, Name: "poke"}
	proposals.Set(ctx, proposal.Proposal{StatefulSet: forged, Source: v1alpha1.Source{Kind: owner.Kind, Namespace: owner.Namespace, Name: owner.Name}})
	t.Cleanup(func() { proposals.Delete(context.Background(), owner, key) })
	err = wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(context.Context) (bool, error) {
		return counter(t, "controller_runtime_reconcile_total", "controller", "volumeclaimrollout") > reconciles, nil
	})
	if err != nil {
		t.Fatal("the controller did not reconcile the StatefulSet's key again")
	}
	var cur appsv1.StatefulSet
	if err := c.Get(ctx, key, &cur); !apierrors.IsNotFound(err) {
		t.Errorf("StatefulSet after a forged record: %v (image %s), want NotFound (nothing created)", err, imageOf(&cur))
	}

	// The recovery the condition describes, with the StatefulSet re-applied
	// by its tool first and settled (no event of its own follows): clearing
	// the record alone must wake the rollout.
	proposals.Delete(ctx, owner, key)
	reconciles = counter(t, "controller_runtime_reconcile_total", "controller", "volumeclaimrollout")
	if err := c.Create(ctx, converge.Prepare(&live)); err != nil {
		t.Fatal(err)
	}
	if err := fixtures.WaitReady(ctx, c, key, timeout); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(context.Context) (bool, error) {
		return counter(t, "controller_runtime_reconcile_total", "controller", "volumeclaimrollout") > reconciles, nil
	})
	if err != nil {
		t.Fatal("the controller did not reconcile the re-applied StatefulSet")
	}
	waitRollout(t, c, key, "still Stalled JournalRejected with the StatefulSet back", func(v *v1alpha1.VolumeClaimRollout) bool {
		return conditions.GetReason(v, meta.StalledCondition) == v1alpha1.ReasonJournalRejected
	})
	reconciles = counter(t, "controller_runtime_reconcile_total", "controller", "volumeclaimrollout")
	clear := client.RawPatch(types.MergePatchType, []byte(`{"status":{"pendingRecreate":null}}`))
	if err := c.Status().Patch(ctx, rejected, clear); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(context.Context) (bool, error) {
		return counter(t, "controller_runtime_reconcile_total", "controller", "volumeclaimrollout") > reconciles, nil
	})
	if err != nil {
		t.Fatal("clearing the refused record did not wake the rollout")
	}
	waitRollout(t, c, key, "Ready once the record was cleared", func(v *v1alpha1.VolumeClaimRollout) bool {
		return !conditions.IsStalled(v) && conditions.IsReady(v)
	})
}

func imageOf(sts *appsv1.StatefulSet) string {
	if cs := sts.Spec.Template.Spec.Containers; len(cs) > 0 {
		return cs[0].Image
	}
	return ""
}

// The key is made once, kept in an immutable Secret and read again; a
// Secret whose key is too short is refused, never used.
func TestLoadJournalKey(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	first, err := rollout.LoadJournalKey(ctx, c, c, journalKeyOf)
	if err != nil {
		t.Fatal(err)
	}
	again, err := rollout.LoadJournalKey(ctx, c, c, journalKeyOf)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(first) || len(first) < converge.MinKeyLength {
		t.Errorf("key read again differs from the first (%d and %d bytes)", len(again), len(first))
	}
	var s corev1.Secret
	if err := c.Get(ctx, journalKeyOf, &s); err != nil {
		t.Fatal(err)
	}
	if s.Immutable == nil || !*s.Immutable {
		t.Error("the journal key Secret is not immutable")
	}

	short := types.NamespacedName{Namespace: journalKeyOf.Namespace, Name: "short-journal-key"}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: short.Namespace, Name: short.Name},
		Data: map[string][]byte{rollout.JournalKeyField: []byte("1234")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rollout.LoadJournalKey(ctx, c, c, short); err == nil || !strings.Contains(err.Error(), "has 4 bytes") || strings.Contains(err.Error(), "1234") {
		t.Errorf("LoadJournalKey of a 4-byte key = %v, want an error naming the length, not the key", err)
	}
}
