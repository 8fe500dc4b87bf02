package rollout_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

func TestBumpPatchesHighestOrdinalFirstOneAtATime(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "web", 3, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "Ready at 2Gi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 3 && v.Status.Claims[0].To == "2Gi"
	})
	if vcr.Status.Progress != "3/3" || vcr.Status.Counts.Capacity != "6Gi" {
		t.Errorf("progress %q capacity %q, want 3/3 and 6Gi", vcr.Status.Progress, vcr.Status.Counts.Capacity)
	}
	for _, name := range []string{"data-web-0", "data-web-1", "data-web-2"} {
		pvc := claim(t, c, ns, name)
		if r, cp := request(pvc), capacity(pvc); r.String() != "2Gi" || cp.String() != "2Gi" {
			t.Errorf("%s: request %s capacity %s, want 2Gi", name, r.String(), cp.String())
		}
	}
	patched := waitEvents(t, c, ns, "ClaimPatched", 3)
	if len(patched) != 3 {
		t.Fatalf("want exactly 3 patches, got %d", len(patched))
	}
	for i, want := range []string{"data-web-2", "data-web-1", "data-web-0"} {
		if !strings.Contains(patched[i].Note, want) {
			t.Errorf("patch %d: %q, want %s (highest ordinal first)", i, patched[i].Note, want)
		}
	}
	// One at a time: each patch comes after the previous claim reached its
	// capacity, which the simulator grants only after its delay.
	for i := 1; i < len(patched); i++ {
		if gap := patched[i].EventTime.Sub(patched[i-1].EventTime.Time); gap < simDelay {
			t.Errorf("patch %d followed patch %d after %v, before the previous resize (%v) could finish", i, i-1, gap, simDelay)
		}
	}
	if len(events(t, c, ns, v1alpha1.ReasonCompatible)) == 0 {
		t.Error("no completion event")
	}
}

func TestDecreaseLeavesLargerClaimsOverSized(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "db", 2, classExpandable, "2Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("1Gi")); err != nil {
		t.Fatal(err)
	}
	// The shipped increase-only policy denies the smaller template; the claims
	// are reported over-sized and left exactly as they are.
	vcr := waitRollout(t, c, key, "Stalled with over-sized claims", func(v *v1alpha1.VolumeClaimRollout) bool {
		return stalled(v) && v.Status.Counts.OverSized == 2
	})
	for _, cl := range vcr.Status.Claims {
		if !cl.OverSized || cl.Phase != v1alpha1.ClaimDenied || cl.From != "2Gi" || cl.To != "2Gi" || !strings.Contains(cl.Message, "increase-only") {
			t.Errorf("claim %+v: want over-sized, 2Gi→2Gi, denied by increase-only", cl)
		}
	}
	for _, name := range []string{"data-db-0", "data-db-1"} {
		if r := request(claim(t, c, ns, name)); r.String() != "2Gi" {
			t.Errorf("%s shrank to %s", name, r.String())
		}
	}
	if n := len(events(t, c, ns, "ClaimPatched")); n != 0 {
		t.Errorf("%d patches after a decrease, want none", n)
	}
	if msg := condition(vcr, meta.StalledCondition); !strings.HasPrefix(msg, v1alpha1.ReasonPolicyDenied) {
		t.Errorf("Stalled: %s, want %s", msg, v1alpha1.ReasonPolicyDenied)
	}
}

func TestStorageClassChangeIsReportedNotPatched(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "kv", 2, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	before := claim(t, c, ns, "data-kv-1").ResourceVersion

	err := fixtures.ReplaceTemplates(context.Background(), c, key, func(s *appsv1.StatefulSet) {
		s.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To(classOther)
		s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests["storage"] = resource.MustParse("3Gi")
	})
	if err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "Stalled", stalled)
	msg := condition(vcr, meta.StalledCondition)
	// The shipped class-must-match policy speaks first; the diff's own
	// report of the immutable field is in the claim's problems either way.
	if !strings.HasPrefix(msg, v1alpha1.ReasonPolicyDenied) || !strings.Contains(msg, "class-must-match") || !strings.Contains(msg, classExpandable) || !strings.Contains(msg, classOther) {
		t.Errorf("Stalled: %s, want %s by class-must-match naming %q and %q", msg, v1alpha1.ReasonPolicyDenied, classExpandable, classOther)
	}
	if vcr.Status.Counts.Denied != 2 {
		t.Errorf("denied %d, want 2", vcr.Status.Counts.Denied)
	}
	if after := claim(t, c, ns, "data-kv-1"); after.ResourceVersion != before {
		t.Errorf("PVC changed (resourceVersion %s → %s); it must not be patched", before, after.ResourceVersion)
	}
	if n := len(events(t, c, ns, "ClaimPatched")); n != 0 {
		t.Errorf("%d patches, want none", n)
	}
	if n := len(events(t, c, ns, v1alpha1.ReasonPolicyDenied)); n != 1 {
		t.Errorf("%d block events, want exactly 1", n)
	}
}

func TestRejectedPatchStallsWithTheServerMessage(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	// Nothing provisions this class, so the claims stay Pending and the API
	// server refuses to resize them; the policies allow the change.
	sts := fixtures.StatefulSet(ns, "cache", 2, classUnbound, "1Gi")
	if err := c.Create(context.Background(), sts); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(sts)
	waitRollout(t, c, key, "seeing both claims", func(v *v1alpha1.VolumeClaimRollout) bool {
		return v.Status.Counts.Total == 2 && v.Status.Claims[0].From != "" && v.Status.Claims[1].From != ""
	})

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "Stalled", stalled)
	msg := condition(vcr, meta.StalledCondition)
	if !strings.HasPrefix(msg, v1alpha1.ReasonPatchRejected) || !strings.Contains(msg, "data-cache-1") || !strings.Contains(msg, "bound claims") {
		t.Errorf("Stalled: %s, want %s naming data-cache-1 and the server's message", msg, v1alpha1.ReasonPatchRejected)
	}
	if vcr.Status.Counts.Failed != 1 {
		t.Errorf("failed %d, want 1 (the rollout stops at the first rejection)", vcr.Status.Counts.Failed)
	}
	if r := request(claim(t, c, ns, "data-cache-0")); r.String() != "1Gi" {
		t.Errorf("data-cache-0 request %s: the next claim must wait", r.String())
	}
}

func TestResizeFailureIsSurfaced(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "queue", 1, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	sim.FailResize(ns, "data-queue-0", "simulated backend quota exceeded")

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "Stalled by the resize failure", stalled)
	if msg := condition(vcr, meta.StalledCondition); !strings.Contains(msg, "simulated backend quota exceeded") {
		t.Errorf("Stalled: %s, want the storage's message", msg)
	}
	if vcr.Status.Claims[0].Phase != v1alpha1.ClaimFailed {
		t.Errorf("claim phase %s, want Failed", vcr.Status.Claims[0].Phase)
	}

	sim.ClearFailure(ns, "data-queue-0")
	waitRollout(t, c, key, "Ready once the storage recovers", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Capacity == "2Gi"
	})
}

func TestOnClaimDeleteLeavesExistingClaims(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "logs", 2, classExpandable, "1Gi")
	sts.Annotations = map[string]string{v1alpha1.UpdateStrategyAnnotation: string(v1alpha1.OnClaimDelete)}
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "waiting for claim deletion", func(v *v1alpha1.VolumeClaimRollout) bool {
		return strings.HasPrefix(condition(v, meta.ReadyCondition), v1alpha1.ReasonWaitingForClaims)
	})
	if vcr.Status.Strategy != v1alpha1.OnClaimDelete {
		t.Errorf("strategy %q", vcr.Status.Strategy)
	}
	if r := request(claim(t, c, ns, "data-logs-1")); r.String() != "1Gi" {
		t.Errorf("data-logs-1 patched to %s under OnClaimDelete", r.String())
	}
}

func TestInvalidStrategyAnnotationIsRejectedByName(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "bad", 1, classExpandable, "1Gi")
	sts.Annotations = map[string]string{v1alpha1.UpdateStrategyAnnotation: "Sideways"}
	if err := c.Create(context.Background(), sts); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, client.ObjectKeyFromObject(sts), "Stalled", stalled)
	if msg := condition(vcr, meta.StalledCondition); !strings.Contains(msg, v1alpha1.UpdateStrategyAnnotation) || !strings.Contains(msg, "Sideways") {
		t.Errorf("Stalled: %s, want the annotation and its value named", msg)
	}
}

func TestIgnoredAndOperatorOwnedStatefulSetsAreLeftAlone(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	ctx := context.Background()
	ignored := fixtures.StatefulSet(ns, "ignored", 1, classExpandable, "1Gi")
	ignored.Annotations = map[string]string{v1alpha1.IgnoreAnnotation: "true"}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "operator"}}
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	owned := fixtures.StatefulSet(ns, "owned", 1, classExpandable, "1Gi")
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	managed := fixtures.StatefulSet(ns, "managed", 1, classExpandable, "1Gi")
	for _, s := range []*appsv1.StatefulSet{ignored, owned, managed} {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// The controller handles events in order: once the last StatefulSet has its
	// rollout, the first two have been looked at.
	waitRollout(t, c, client.ObjectKeyFromObject(managed), "created", func(*v1alpha1.VolumeClaimRollout) bool { return true })
	for _, s := range []*appsv1.StatefulSet{ignored, owned} {
		err := c.Get(ctx, client.ObjectKeyFromObject(s), &v1alpha1.VolumeClaimRollout{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s: want no VolumeClaimRollout, got err=%v", s.Name, err)
		}
	}
}
