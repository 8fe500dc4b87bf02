package rollout_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// Without a step limit 1Gi → 10Gi passes the policies; the recovery is
// allowed (the default) or refused.
var (
	noStepLimit   = map[string]any{"max_step_percent": nil}
	noRecoveryYet = map[string]any{"max_step_percent": nil, "allow_recovery": false}
)

var recoveryCommits atomic.Int64

// recoveryCommit is a fresh commit SHA for a StatefulSet's revision annotation.
func recoveryCommit() string {
	return fmt.Sprintf("%040x", recoveryCommits.Add(1)+time.Now().UnixNano())
}

// scopedStatefulSet is a StatefulSet of replicas claims of 1Gi that the
// scoped controller of name manages, proposed by commit sha.
func scopedStatefulSet(ns, name, controller string, replicas int32, sha string) *appsv1.StatefulSet {
	sts := fixtures.StatefulSet(ns, name, replicas, classExpandable, "1Gi")
	// A map of its own: the fixture shares its labels with the selector.
	sts.Labels = map[string]string{"app": name, scopedLabel: controller}
	sts.Annotations = map[string]string{
		v1alpha1.RepositoryAnnotation: "https://git.example.com/org/apps.git",
		v1alpha1.RevisionAnnotation:   sha,
	}
	return sts
}

// resizeTo changes the template to size as proposed by commit sha, the way
// users must today (orphan delete, re-create).
func resizeTo(t *testing.T, c client.Client, key client.ObjectKey, size, sha string) {
	t.Helper()
	err := fixtures.ReplaceTemplates(context.Background(), c, key, func(s *appsv1.StatefulSet) {
		fixtures.SetTemplateSize(size)(s)
		s.Annotations[v1alpha1.RevisionAnnotation] = sha
	})
	if err != nil {
		t.Fatal(err)
	}
}

// failedAt10Gi grows the template of a fresh 3-claim StatefulSet to 10Gi
// while the storage fails that resize of claim 2: the rollout stops with
// claim 2 Failed and the others untouched.
func failedAt10Gi(t *testing.T, c client.Client, ns, name, controller string) client.ObjectKey {
	t.Helper()
	sts := scopedStatefulSet(ns, name, controller, 3, recoveryCommit())
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	failing := "data-" + name + "-2"
	sim.FailResize(ns, failing, "simulated: the pool has no room for 10Gi")
	t.Cleanup(func() { sim.ClearFailure(ns, failing) })

	resizeTo(t, c, key, "10Gi", recoveryCommit())
	vcr := waitRollout(t, c, key, "Stalled by the failed resize", func(v *v1alpha1.VolumeClaimRollout) bool {
		return stalled(v) && len(v.Status.Claims) == 3 && v.Status.Claims[2].Phase == v1alpha1.ClaimFailed
	})
	if msg := condition(vcr, meta.StalledCondition); !strings.HasPrefix(msg, v1alpha1.ReasonResizeFailed) || !strings.Contains(msg, "no room for 10Gi") {
		t.Fatalf("Stalled: %s, want %s with the storage's message", msg, v1alpha1.ReasonResizeFailed)
	}
	for _, n := range []string{"data-" + name + "-0", "data-" + name + "-1"} {
		if r := request(claim(t, c, ns, n)); r.String() != "1Gi" {
			t.Fatalf("%s requests %s: patches must stop at the failed claim", n, r.String())
		}
	}
	return key
}

// KEP-1790: a template back at a size above the failed claim's capacity
// lowers its request, the storage accepts it, and the rollout finishes;
// the rollout, its completion event and the commit status say so.
func TestFailedExpansionRecoversToASmallerTemplate(t *testing.T) {
	c := started(t)
	scopedController(t, "recovery", noStepLimit, allowWorkloadAnnotations)
	ns := namespace(t, c)
	key := failedAt10Gi(t, c, ns, "vault", "recovery")
	ctx := context.Background()

	// What the API server allows: not down to the capacity...
	failed := claim(t, c, ns, "data-vault-2")
	if r, q := request(failed), capacity(failed); q.String() != "1Gi" || r.String() != "10Gi" {
		t.Fatalf("claim 2 requests %s with capacity %s, want 10Gi and 1Gi", r.String(), q.String())
	}
	err := c.Patch(ctx, failed.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"resources":{"requests":{"storage":"1Gi"}}}}`)))
	if apierrors.IsInvalid(err) && strings.Contains(err.Error(), "can not be less than previous value") {
		recoveryRefusedByServer(t, c, key)
		return
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "can not be less than status.capacity") {
		t.Fatalf("lowering the request to the capacity: %v, want 422 naming status.capacity", err)
	}

	sha := recoveryCommit()
	resizeTo(t, c, key, "2Gi", sha)
	vcr := waitRollout(t, c, key, "Ready at 2Gi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 3 && v.Status.Counts.Capacity == "6Gi"
	})
	// ...but below the request, above the capacity: what claimwarden did.
	for i := range 3 {
		name := fmt.Sprintf("data-vault-%d", i)
		pvc := claim(t, c, ns, name)
		if r, q := request(pvc), capacity(pvc); r.String() != "2Gi" || q.String() != "2Gi" {
			t.Errorf("%s: request %s, capacity %s, want 2Gi", name, r.String(), q.String())
		}
	}
	if got := claim(t, c, ns, "data-vault-2").Annotations[v1alpha1.RecoveredFromAnnotation]; got != "10Gi" {
		t.Errorf("data-vault-2 %s = %q, want 10Gi", v1alpha1.RecoveredFromAnnotation, got)
	}
	const said = "recovered from failed expansion to 2Gi"
	if msg := vcr.Status.Claims[2].Message; !strings.Contains(msg, said+" (the expansion to 10Gi had failed)") {
		t.Errorf("claim 2: %q, want %q", msg, said)
	}
	if msg := condition(vcr, meta.ReadyCondition); !strings.Contains(msg, said+": data-vault-2") {
		t.Errorf("Ready: %s, want %q naming the claim", msg, said)
	}
	if vcr.Status.Counts.OverSized != 0 || vcr.Status.Counts.Failed != 0 {
		t.Errorf("counts %+v, want nothing over-sized or failed", vcr.Status.Counts)
	}

	lowered := false
	for _, e := range events(t, c, ns, v1alpha1.ReasonClaimPatched) {
		if strings.Contains(e.Note, "data-vault-2: storage 10Gi → 2Gi to recover from the failed expansion to 10Gi") {
			lowered = true
		}
	}
	if !lowered {
		t.Error("no ClaimPatched event says data-vault-2 was lowered to recover")
	}
	complete := waitEvents(t, c, ns, v1alpha1.ReasonCompatible, 1)
	if note := complete[len(complete)-1].Note; !strings.Contains(note, said) {
		t.Errorf("completion event %q, want %q", note, said)
	}
	s := waitStatus(t, sha, "claimwarden/"+ns+"/vault", func(s commitstatus.Status) bool { return s.State == commitstatus.Success })
	if !strings.Contains(s.Description, said) {
		t.Errorf("commit status %q, want %q", s.Description, said)
	}
}

// recoveryRefusedByServer is the recovery on a server that refuses every
// lower request (RecoverVolumeExpansionFailure off, as before 1.32):
// claimwarden knows it from a dry run, increase-only refuses the recovery
// naming the server, and nothing is patched.
func recoveryRefusedByServer(t *testing.T, c client.Client, key client.ObjectKey) {
	t.Helper()
	t.Logf("compat: the server refuses any lower request (RecoverVolumeExpansionFailure off): the recovery is refused, naming the server, and nothing is patched")
	resizeTo(t, c, key, "2Gi", recoveryCommit())
	vcr := waitRollout(t, c, key, "the recovery denied", func(v *v1alpha1.VolumeClaimRollout) bool {
		return strings.HasPrefix(condition(v, meta.StalledCondition), v1alpha1.ReasonPolicyDenied) && v.Status.Claims[2].Phase == v1alpha1.ClaimDenied
	})
	const want = "refused because this API server does not accept a lowered request"
	if msg := vcr.Status.Claims[2].Message; !strings.Contains(msg, want) {
		t.Errorf("claim 2: %q, want %q", msg, want)
	}
	assertUnpatched(t, c, key.Namespace, key.Name, "10Gi")
}

// A template below the failed claim's capacity would shrink the volume:
// increase-only denies it and nothing is patched, recovery or not.
func TestTemplateBelowCapacityIsAShrinkEvenAfterAFailure(t *testing.T) {
	c := started(t)
	scopedController(t, "recovery", noStepLimit, allowWorkloadAnnotations)
	ns := namespace(t, c)
	key := failedAt10Gi(t, c, ns, "below", "recovery")

	resizeTo(t, c, key, "512Mi", recoveryCommit())
	vcr := waitRollout(t, c, key, "denied by increase-only", func(v *v1alpha1.VolumeClaimRollout) bool {
		return strings.HasPrefix(condition(v, meta.StalledCondition), v1alpha1.ReasonPolicyDenied) && v.Status.Claims[2].Phase == v1alpha1.ClaimDenied
	})
	if msg := vcr.Status.Claims[2].Message; !strings.Contains(msg, "increase-only") || !strings.Contains(msg, "can only grow") {
		t.Errorf("claim 2: %q, want the shrink denied by increase-only", msg)
	}
	assertUnpatched(t, c, ns, "below", "10Gi")
}

// allow_recovery: false refuses the recovery like a shrink: the claim
// keeps its failed request and the denial names the parameter.
func TestRecoveryRefusedByParameter(t *testing.T) {
	c := started(t)
	scopedController(t, "norecovery", noRecoveryYet)
	ns := namespace(t, c)
	key := failedAt10Gi(t, c, ns, "kept", "norecovery")

	resizeTo(t, c, key, "2Gi", recoveryCommit())
	vcr := waitRollout(t, c, key, "denied by increase-only", func(v *v1alpha1.VolumeClaimRollout) bool {
		return strings.HasPrefix(condition(v, meta.StalledCondition), v1alpha1.ReasonPolicyDenied) && v.Status.Claims[2].Phase == v1alpha1.ClaimDenied
	})
	want := "the template requests 2Gi, less than the claim's current 10Gi, which would recover the claim from its failed expansion to 10Gi (capacity 1Gi); refused because parameter allow_recovery (policies.params) is false"
	if msg := vcr.Status.Claims[2].Message; !strings.Contains(msg, want) {
		t.Errorf("claim 2: %q, want %q", msg, want)
	}
	assertUnpatched(t, c, ns, "kept", "10Gi")
}

// A smaller template lowers nothing when no expansion failed: the claim
// grew to 10Gi, so going back to 2Gi is a shrink.
func TestPlainDecreaseIsNeverLowered(t *testing.T) {
	c := started(t)
	scopedController(t, "recovery", noStepLimit, allowWorkloadAnnotations)
	ns := namespace(t, c)
	sts := scopedStatefulSet(ns, "grown", "recovery", 1, recoveryCommit())
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	resizeTo(t, c, key, "10Gi", recoveryCommit())
	waitRollout(t, c, key, "Ready at 10Gi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Capacity == "10Gi"
	})

	resizeTo(t, c, key, "2Gi", recoveryCommit())
	vcr := waitRollout(t, c, key, "denied by increase-only", func(v *v1alpha1.VolumeClaimRollout) bool {
		return strings.HasPrefix(condition(v, meta.StalledCondition), v1alpha1.ReasonPolicyDenied)
	})
	if cl := vcr.Status.Claims[0]; cl.Phase != v1alpha1.ClaimDenied || !strings.Contains(cl.Message, "can only grow") {
		t.Errorf("claim %+v, want Denied as a shrink", cl)
	}
	pvc := claim(t, c, ns, "data-grown-0")
	if r := request(pvc); r.String() != "10Gi" || pvc.Annotations[v1alpha1.RecoveredFromAnnotation] != "" {
		t.Errorf("claim requests %s, annotations %v: want 10Gi and no recovery", r.String(), pvc.Annotations)
	}
}

// assertUnpatched checks that the failed claim 2 still requests failedAt
// and no claim of the StatefulSet was patched since the failure.
func assertUnpatched(t *testing.T, c client.Client, ns, name, failedAt string) {
	t.Helper()
	pvc := claim(t, c, ns, "data-"+name+"-2")
	if r := request(pvc); r.String() != failedAt || pvc.Annotations[v1alpha1.RecoveredFromAnnotation] != "" {
		t.Errorf("claim 2 requests %s, annotations %v: want %s, not lowered", r.String(), pvc.Annotations, failedAt)
	}
	for _, n := range []string{"data-" + name + "-0", "data-" + name + "-1"} {
		if r := request(claim(t, c, ns, n)); r.String() != "1Gi" {
			t.Errorf("%s requests %s, want 1Gi: nothing is patched while a claim is denied", n, r.String())
		}
	}
	if n := len(events(t, c, ns, v1alpha1.ReasonClaimPatched)); n != 1 {
		t.Errorf("%d ClaimPatched events, want 1 (the failed 10Gi)", n)
	}
	var list corev1.PersistentVolumeClaimList
	if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil || len(list.Items) != 3 {
		t.Errorf("claims %d (%v), want the 3 claims kept", len(list.Items), err)
	}
}
