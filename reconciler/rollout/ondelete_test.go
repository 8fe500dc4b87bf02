package rollout_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// Under updateStrategy OnDelete a claim follows its Pod, as in KEP-4650:
// after a template change every claim waits, naming its Pod; deleting Pod
// 2 (the user's action under OnDelete) lets claim 2 through, and only it.
func TestOnDeleteClaimsFollowTheirPods(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "ledger", 3, classExpandable, "1Gi")
	sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	ctx := context.Background()
	before := podUIDs(t, c, ns)

	if err := fixtures.ReplaceTemplates(ctx, c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "waiting for Pod deletions", func(v *v1alpha1.VolumeClaimRollout) bool {
		return strings.HasPrefix(condition(v, meta.ReadyCondition), v1alpha1.ReasonWaitingForPods) && v.Status.ObservedGeneration > 0
	})
	if msg := condition(vcr, meta.ReadyCondition); !strings.Contains(msg, "updateStrategy OnDelete holds 3 claim(s) until their Pods are deleted: ledger-0, ledger-1, ledger-2") {
		t.Errorf("Ready: %s, want the Pods named", msg)
	}
	for i, cl := range vcr.Status.Claims {
		pod := "Pod ledger-" + string(rune('0'+i)) + " is older than the templates"
		if cl.Phase != v1alpha1.ClaimPending || !strings.Contains(cl.Message, pod) {
			t.Errorf("%s: %s %q, want Pending: %s", cl.Name, cl.Phase, cl.Message, pod)
		}
	}
	if n := len(events(t, c, ns, v1alpha1.ReasonClaimPatched)); n != 0 {
		t.Fatalf("%d claims patched before any Pod was deleted", n)
	}

	// The user's action under OnDelete.
	pod2 := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ledger-2"}, pod2); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, pod2, client.Preconditions{UID: &pod2.UID}); err != nil {
		t.Fatal(err)
	}
	vcr = waitRollout(t, c, key, "claim 2 compatible, the others waiting", func(v *v1alpha1.VolumeClaimRollout) bool {
		return len(v.Status.Claims) == 3 && v.Status.Claims[2].Phase == v1alpha1.ClaimCompatible &&
			strings.HasPrefix(condition(v, meta.ReadyCondition), v1alpha1.ReasonWaitingForPods)
	})
	if msg := condition(vcr, meta.ReadyCondition); !strings.Contains(msg, "1/3 claims compatible; updateStrategy OnDelete holds 2 claim(s) until their Pods are deleted: ledger-0, ledger-1") {
		t.Errorf("Ready: %s", msg)
	}
	if r := request(claim(t, c, ns, "data-ledger-2")); r.String() != "2Gi" {
		t.Errorf("data-ledger-2 requests %s, want 2Gi", r.String())
	}
	for _, name := range []string{"data-ledger-0", "data-ledger-1"} {
		if r := request(claim(t, c, ns, name)); r.String() != "1Gi" {
			t.Errorf("%s patched to %s while its Pod is the old one", name, r.String())
		}
	}
	patched := events(t, c, ns, v1alpha1.ReasonClaimPatched)
	if len(patched) != 1 || !strings.Contains(patched[0].Note, "data-ledger-2") {
		t.Errorf("patches %v, want only data-ledger-2's", notes(patched))
	}
	after := podUIDs(t, c, ns)
	for _, name := range []string{"ledger-0", "ledger-1"} {
		if after[name] != before[name] {
			t.Errorf("Pod %s was replaced (%s → %s): only the user deletes Pods", name, before[name], after[name])
		}
	}
	if after["ledger-2"] == before["ledger-2"] || after["ledger-2"] == types.UID("") {
		t.Errorf("Pod ledger-2 is %q, want a new one", after["ledger-2"])
	}
}
