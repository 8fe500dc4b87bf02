package rollout

import (
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// Issue 32: the Stalled message says the claim, the policy and "denied by
// policy" once each, and the summary only when it adds other claims.
func TestBlockedMessageSaysEachThingOnce(t *testing.T) {
	denial := "increase-only: claim data-x-0 (StatefulSet shop/x): a PVC's storage request can only grow"
	one := plan.Build(diff.Result{Claims: []diff.ClaimChange{{Name: "data-x-0", Template: "data"}}},
		plan.Options{Strategy: v1alpha1.InPlace, PolicyDenied: map[string]string{"data-x-0": denial}})
	if got := blockedMessage(one); got != denial {
		t.Errorf("one denied claim: %q, want %q", got, denial)
	}
	two := plan.Build(diff.Result{Claims: []diff.ClaimChange{{Name: "data-x-0", Template: "data"}, {Name: "data-x-1", Template: "data", Ordinal: 1}}},
		plan.Options{Strategy: v1alpha1.InPlace, PolicyDenied: map[string]string{"data-x-0": denial, "data-x-1": "increase-only: claim data-x-1 (StatefulSet shop/x): no"}})
	if got, want := blockedMessage(two), denial+"; denied by policy: data-x-0, data-x-1"; got != want {
		t.Errorf("two denied claims: %q, want %q", got, want)
	}
	if got := blockedMessage(two); strings.Count(got, "denied by policy") != 1 {
		t.Errorf("%q says denied by policy more than once", got)
	}
}
