package assess

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/plan"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// shipped is the shipped policies, as the controller and check load them.
func shipped(t *testing.T) *policies.Engine {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e, err := policies.New(ctx, policies.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// cluster is the facts of namespace shop: class "fast", which expands,
// and the quotas.
type cluster struct {
	classes map[string]*storagev1.StorageClass
	quotas  []corev1.ResourceQuota
}

func newCluster() *cluster {
	return &cluster{classes: map[string]*storagev1.StorageClass{
		"fast": {ObjectMeta: metav1.ObjectMeta{Name: "fast"}, AllowVolumeExpansion: ptr.To(true)},
	}}
}

func (c *cluster) withQuota(used, hard string) *cluster {
	c.quotas = []corev1.ResourceQuota{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "storage"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse(hard)}},
		Status:     corev1.ResourceQuotaStatus{Used: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse(used)}},
	}}
	return c
}

func (c *cluster) facts() gate.Facts {
	return gate.Facts{
		Namespace:      func(context.Context) (*corev1.Namespace, error) { return nil, nil },
		ResourceQuotas: func(context.Context) ([]corev1.ResourceQuota, error) { return c.quotas, nil },
		StorageClass: func(_ context.Context, pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
			return c.classes[*pvc.Spec.StorageClassName], nil
		},
		Source: policies.Source{Kind: "Kustomization", Namespace: "flux-system", Name: "shop"},
	}
}

// proposal is StatefulSet shop/web of replicas claims of size on class
// "fast", proposed with its template at to (mutated by more), to be
// re-created to carry it.
func proposal(t *testing.T, replicas int32, size, to string, more ...func(*corev1.PersistentVolumeClaim)) Input {
	live := fixtures.StatefulSet("shop", "web", replicas, "fast", size)
	next := fixtures.StatefulSet("shop", "web", replicas, "fast", to)
	for _, m := range more {
		m(&next.Spec.VolumeClaimTemplates[0])
	}
	in, err := NewInput(live, plan.WithTemplates(live, next), nil, nil, Settings{MaxConcurrent: 1, DefaultStrategy: v1alpha1.InPlace}, Cluster{})
	if err != nil || !in.Recreate {
		t.Fatalf("NewInput: %+v, %v; want a re-create", in, err)
	}
	for o := range replicas {
		in.Claims = append(in.Claims, corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: diff.ClaimName("data", "web", o), Labels: live.Spec.Selector.MatchLabels},
			Spec:       *live.Spec.VolumeClaimTemplates[0].Spec.DeepCopy(),
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: live.Spec.VolumeClaimTemplates[0].Spec.AccessModes,
				Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		})
	}
	return in
}

// Issue 28: three claims 2Gi → 3Gi under a quota of 7Gi with 6Gi used.
// Each claim's 1Gi fits; the proposal's 3Gi does not, so every claim is
// denied, nothing is planned, and the denial says by how much.
func TestAssessDecidesQuotaOverTheWholeProposal(t *testing.T) {
	in := proposal(t, 3, "2Gi", "3Gi")
	in.Facts = newCluster().withQuota("6Gi", "7Gi").facts()
	a, err := Assess(context.Background(), shipped(t), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Verdict.Claims) != 3 {
		t.Fatalf("denied claims %v, want all 3", a.Verdict.Claims)
	}
	want := "quota-fits: claim data-web-2 (StatefulSet shop/web): 2Gi → 3Gi with the other claims of the proposal (3 in all) needs 3Gi more requests.storage, and ResourceQuota storage has 6Gi used of 7Gi: 2Gi over"
	if got := a.Verdict.Claims["data-web-2"]; got != want {
		t.Errorf("denial %q, want %q", got, want)
	}
	if len(a.Plan.Patch) != 0 {
		t.Errorf("patches %v for a denied proposal", a.Plan.Patch)
	}
	if got := a.Growth[string(corev1.ResourceRequestsStorage)]; got != 3<<30 {
		t.Errorf("growth %d, want 3Gi", got)
	}
	if d := a.Denial(); !strings.HasPrefix(d, "quota-fits: claim data-web-0 (StatefulSet shop/web): ") {
		t.Errorf("denial wording %q, want the first claim's", d)
	}

	in.Facts = newCluster().withQuota("4Gi", "7Gi").facts()
	if a, err = Assess(context.Background(), shipped(t), in); err != nil || a.Verdict.Denied() {
		t.Errorf("3Gi more under 3Gi of room: %v, %v; want allowed", a.Verdict, err)
	}
}

// What other proposals of the namespace still have to grow counts too.
func TestAssessCountsOtherProposalsInFlight(t *testing.T) {
	in := proposal(t, 3, "2Gi", "3Gi")
	in.Facts = newCluster().withQuota("4Gi", "7Gi").facts()
	in.InFlight = Growth{"requests.storage": 1 << 30}
	a, err := Assess(context.Background(), shipped(t), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Verdict.Claims["data-web-0"]; !strings.Contains(got, "besides 1Gi more for other proposals in flight") || !strings.Contains(got, "1Gi over") {
		t.Errorf("denial %q, want it to name the 1Gi in flight and the 1Gi over", got)
	}
}

// A claim whose template changes an immutable field no policy denies is
// denied as immutable-field, and so is the whole proposal's patching.
func TestAssessDeniesImmutableFields(t *testing.T) {
	in := proposal(t, 2, "2Gi", "3Gi", func(t *corev1.PersistentVolumeClaim) {
		t.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	})
	in.Recreate = false
	in.Live = in.Desired
	in.Facts = newCluster().facts()
	a, err := Assess(context.Background(), shipped(t), in)
	if err != nil {
		t.Fatal(err)
	}
	got := a.Verdict.Claims["data-web-1"]
	if !strings.HasPrefix(got, ImmutablePolicy+": immutable fields differ") || !strings.Contains(got, "ReadWriteMany") {
		t.Errorf("denial %q, want %s naming the access mode", got, ImmutablePolicy)
	}
	if len(a.Plan.Patch) != 0 {
		t.Errorf("patches %v", a.Plan.Patch)
	}
}

// Facts a pull request brings add denials and never lift one.
func TestAssessAlsoFactsOnlyAddDenials(t *testing.T) {
	fixed := newCluster()
	fixed.classes["fast"] = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, AllowVolumeExpansion: ptr.To(false)}
	for _, tc := range []struct {
		name        string
		facts, also *cluster
	}{
		{"the proposal lets the class expand", fixed, newCluster()},
		{"the proposal stops the class expanding", newCluster(), fixed},
		{"the proposal raises the quota", newCluster().withQuota("6Gi", "7Gi"), newCluster().withQuota("6Gi", "70Gi")},
		{"the proposal lowers the quota", newCluster().withQuota("6Gi", "70Gi"), newCluster().withQuota("6Gi", "7Gi")},
	} {
		in := proposal(t, 3, "2Gi", "3Gi")
		in.Facts, in.Also = tc.facts.facts(), []gate.Facts{tc.also.facts()}
		a, err := Assess(context.Background(), shipped(t), in)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Verdict.Claims) != 3 {
			t.Errorf("%s: denied %v, want every claim denied", tc.name, a.Verdict.Claims)
		}
	}
}

// A plan never patches before the re-create that carries the templates.
func TestAssessHoldsPatchesUntilTheRecreate(t *testing.T) {
	in := proposal(t, 2, "2Gi", "3Gi")
	in.Facts = newCluster().facts()
	a, err := Assess(context.Background(), shipped(t), in)
	if err != nil {
		t.Fatal(err)
	}
	if a.Verdict.Denied() || len(a.Plan.Patch) != 0 {
		t.Fatalf("verdict %v, patches %v; want allowed and held", a.Verdict, a.Plan.Patch)
	}
	in.Recreate, in.Live = false, in.Desired
	if a, err = Assess(context.Background(), shipped(t), in); err != nil || len(a.Plan.Patch) != 1 {
		t.Errorf("after the re-create: patches %v, %v; want the highest claim", a.Plan.Patch, err)
	}
}
