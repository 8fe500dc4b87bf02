package assess

import (
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// Denial is the proposal's denial in the words its commit status says it
// (outcome.StateOf on the controller's side): the StatefulSet-level
// change's, else the first denied claim's in diff order; "" when nothing
// is denied.
func (a Assessment) Denial() string {
	if a.Verdict.StatefulSet != "" {
		return outcome.StatefulSetDenied(a.Verdict.StatefulSet)
	}
	for _, ans := range a.Answers.Claims {
		if !ans.Verdict.Allowed {
			return outcome.ClaimDenied(ans.Claim, plan.DenialText(ans.Verdict.Denials))
		}
	}
	return ""
}
