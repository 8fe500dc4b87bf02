package rollout_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// storageQuota creates a ResourceQuota limiting requests.storage to hard
// and waits for kube-controller-manager to count what is used: until then
// the policies would see nothing used.
func storageQuota(t *testing.T, c client.Client, ns, name, hard, wantUsed string, scope *corev1.ScopeSelector) *corev1.ResourceQuota {
	t.Helper()
	ctx := context.Background()
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ResourceQuotaSpec{
			Hard:          corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse(hard)},
			ScopeSelector: scope,
		},
	}
	if err := c.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
			return false, err
		}
		used, ok := q.Status.Used[corev1.ResourceRequestsStorage]
		return ok && used.Cmp(resource.MustParse(wantUsed)) == 0, nil
	})
	if err != nil {
		t.Fatalf("ResourceQuota %s/%s: used %v, want requests.storage %s: %v", ns, name, q.Status.Used, wantUsed, err)
	}
	return q
}

func TestQuotaTooSmallIsDeniedByQuotaFitsBeforeAnyPatch(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "q", 3, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	// 3Gi used of 3.5Gi; each claim's 1Gi → 2Gi fits alone, the proposal's
	// 3Gi does not: every claim is denied, none patched (issue 28).
	quota := storageQuota(t, c, ns, "storage", "3584Mi", "3Gi", nil)

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "denied", func(v *v1alpha1.VolumeClaimRollout) bool {
		return stalled(v) && v.Status.Counts.Denied == 3
	})
	msg := condition(vcr, meta.StalledCondition)
	for _, want := range []string{v1alpha1.ReasonPolicyDenied, "quota-fits: claim data-q-", "1Gi → 2Gi with the other claims of the proposal (3 in all) needs 3Gi more requests.storage, and ResourceQuota storage has 3Gi used of 3584Mi: 2560Mi over"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Stalled: %s, want it to contain %q", msg, want)
		}
	}
	for _, name := range []string{"data-q-0", "data-q-1", "data-q-2"} {
		if r := request(claim(t, c, ns, name)); r.String() != "1Gi" {
			t.Errorf("%s patched to %s despite the denial", name, r.String())
		}
	}
	if n := len(events(t, c, ns, "ClaimPatched")); n != 0 {
		t.Errorf("%d patches, want none", n)
	}

	// Room for all three: the quota's change alone makes the rollout go on.
	quota.Spec.Hard[corev1.ResourceRequestsStorage] = resource.MustParse("6Gi")
	if err := c.Update(context.Background(), quota); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, key, "Ready after the quota grew", readyTrue)
	for _, name := range []string{"data-q-0", "data-q-1", "data-q-2"} {
		if r := request(claim(t, c, ns, name)); r.String() != "2Gi" {
			t.Errorf("%s request %s, want 2Gi", name, r.String())
		}
	}
}

// A quota quota-fits leaves to the API server (scoped: it counts the claims
// without a VolumeAttributesClass) refuses the patch; the rollout stalls
// PatchRejected with the server's words, which name the quota.
func TestPatchRefusedForQuotaIsPatchRejectedNamingTheQuota(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "qs", 2, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	storageQuota(t, c, ns, "without-attributes", "2560Mi", "2Gi", &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
		ScopeName: corev1.ResourceQuotaScopeVolumeAttributesClass, Operator: corev1.ScopeSelectorOpDoesNotExist,
	}}})

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "Stalled", stalled)
	msg := condition(vcr, meta.StalledCondition)
	for _, want := range []string{v1alpha1.ReasonPatchRejected, "exceeded quota: without-attributes", "limited: requests.storage=2560Mi"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Stalled: %s, want it to contain %q", msg, want)
		}
	}
	for _, name := range []string{"data-qs-0", "data-qs-1"} {
		if r := request(claim(t, c, ns, name)); r.String() != "1Gi" {
			t.Errorf("%s request %s: the API server refused it", name, r.String())
		}
	}
}

// Issue 28: two StatefulSets of one namespace whose proposals each fit
// the quota alone but not together. The first one assessed reserves what
// it still has to grow; the other is decided with it and denied, so it is
// never patched half-way, and stays denied once the first has grown.
func TestProposalsInFlightShareTheQuota(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	a := fixtures.StatefulSet(ns, "a", 3, classExpandable, "1Gi")
	b := fixtures.StatefulSet(ns, "b", 3, classExpandable, "1Gi")
	createReady(t, c, a)
	createReady(t, c, b)
	// 6Gi used of 9Gi: either proposal's 3Gi fits, both (6Gi) do not.
	storageQuota(t, c, ns, "storage", "9Gi", "6Gi", nil)

	keys := []client.ObjectKey{client.ObjectKeyFromObject(a), client.ObjectKeyFromObject(b)}
	for _, key := range keys {
		if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
			t.Fatal(err)
		}
	}
	// Ready at the new size, not the Ready of before the change.
	grownTo2Gi := func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && len(v.Status.Claims) == 3 && !slices.ContainsFunc(v.Status.Claims, func(c v1alpha1.ClaimStatus) bool { return c.To != "2Gi" })
	}
	outcome := map[string]*v1alpha1.VolumeClaimRollout{}
	for _, key := range keys {
		outcome[key.Name] = waitRollout(t, c, key, "Ready at 2Gi or denied", func(v *v1alpha1.VolumeClaimRollout) bool {
			return grownTo2Gi(v) || (stalled(v) && v.Status.Counts.Denied == 3)
		})
	}
	grown, denied := "a", "b"
	if !grownTo2Gi(outcome["a"]) {
		grown, denied = "b", "a"
	}
	if !grownTo2Gi(outcome[grown]) || !stalled(outcome[denied]) {
		t.Fatalf("want one rollout Ready and the other denied; a: %s, b: %s", describe(outcome["a"]), describe(outcome["b"]))
	}
	if msg := condition(outcome[denied], meta.StalledCondition); !strings.Contains(msg, "quota-fits: ") || !strings.Contains(msg, "ResourceQuota storage") {
		t.Errorf("%s: Stalled %s, want quota-fits naming the quota", denied, msg)
	}
	for o := range int32(3) {
		if r := request(claim(t, c, ns, diff.ClaimName("data", denied, o))); r.String() != "1Gi" {
			t.Errorf("claim %d of the denied %s patched to %s", o, denied, r.String())
		}
		if r := request(claim(t, c, ns, diff.ClaimName("data", grown, o))); r.String() != "2Gi" {
			t.Errorf("claim %d of %s is %s, want 2Gi", o, grown, r.String())
		}
	}
}
