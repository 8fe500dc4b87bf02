package check

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// A recovery says what the controller will do with the smaller template:
// lower the request, which it does for nothing else.
func TestClaimResultSaysARecovery(t *testing.T) {
	q := resource.MustParse
	c := diff.ClaimChange{Name: "data-web-2", RequestFrom: q("10Gi"), TemplateRequest: q("2Gi"), RequestTo: q("2Gi"), Capacity: q("1Gi"), Recovery: true}
	got := claimResult(c, policies.Verdict{Allowed: true})
	if len(got.Changes) != 1 || !strings.Contains(got.Changes[0], "recovers from the failed expansion to 10Gi: the request is lowered, above the capacity 1Gi") {
		t.Errorf("changes %q, want the recovery said", got.Changes)
	}
	c.Recovery = false
	if got := claimResult(c, policies.Verdict{Allowed: false}); len(got.Changes) != 0 {
		t.Errorf("a shrink: changes %q, want none", got.Changes)
	}
}

// Against a cluster whose API server serves no VolumeAttributesClasses,
// the template's class is said not to be applied, as the controller says.
func TestClaimResultSaysAClassTheServerCannotApply(t *testing.T) {
	q := resource.MustParse
	gold := "gold"
	c := diff.ClaimChange{Name: "data-web-0", RequestFrom: q("1Gi"), TemplateRequest: q("2Gi"), RequestTo: q("2Gi"), VACUnsupported: &gold}
	got := claimResult(c, policies.Verdict{Allowed: true})
	if want := `volume attributes class "gold" not applied: the cluster's API server serves no VolumeAttributesClasses`; !slices.Contains(got.Changes, want) {
		t.Errorf("changes %q, want %q", got.Changes, want)
	}
}
