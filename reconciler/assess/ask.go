package assess

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// ImmutablePolicy is the policy id of the denial Assess adds when a claim
// differs from its template in a field no patch can change and no policy
// denied it: such a claim is never patched, so the proposal cannot be
// rolled out as written, and doing the rest of it would leave it half done.
const ImmutablePolicy = "immutable-field"

// ask asks every question under facts and under each of also, and keeps
// every denial and warning: facts a pull request brings can add denials,
// never lift one.
func ask(ctx context.Context, ev policies.Evaluator, questions []plan.Question, facts gate.Facts, also []gate.Facts) (gate.Result, error) {
	out, err := gate.Ask(ctx, ev, questions, facts)
	if err != nil {
		return out, err
	}
	for _, f := range also {
		more, err := gate.Ask(ctx, ev, questions, f)
		if err != nil {
			return out, err
		}
		for i := range out.Claims {
			out.Claims[i].Verdict = stricter(out.Claims[i].Verdict, more.Claims[i].Verdict)
		}
		if out.StatefulSet != nil {
			out.StatefulSet.Verdict = stricter(out.StatefulSet.Verdict, more.StatefulSet.Verdict)
		}
	}
	return out, nil
}

// stricter is a with b's denials and warnings that a lacks.
func stricter(a, b policies.Verdict) policies.Verdict {
	for _, r := range b.Denials {
		if !slices.Contains(a.Denials, r) {
			a.Denials = append(a.Denials, r)
		}
	}
	for _, w := range b.Warnings {
		if !slices.Contains(a.Warnings, w) {
			a.Warnings = append(a.Warnings, w)
		}
	}
	a.Allowed = a.Allowed && b.Allowed
	return a
}

// denyImmutable denies, as ImmutablePolicy, every claim that differs from
// its template in an immutable field and that no policy denied.
func denyImmutable(r *gate.Result, res diff.Result) {
	changes := make(map[string]diff.ClaimChange, len(res.Claims))
	for _, c := range res.Claims {
		changes[c.Name] = c
	}
	for i := range r.Claims {
		a := &r.Claims[i]
		c := changes[a.Claim]
		if !a.Verdict.Allowed || len(c.Immutable) == 0 {
			continue
		}
		parts := make([]string, 0, len(c.Immutable))
		for _, m := range c.Immutable {
			parts = append(parts, fmt.Sprintf("%s: PVC %s, template %s", m.Field, m.Live, m.Desired))
		}
		a.Verdict.Allowed = false
		a.Verdict.Denials = append(a.Verdict.Denials, policies.Reason{Policy: ImmutablePolicy,
			Message: "immutable fields differ, so the claim is left as it is: " + strings.Join(parts, "; ")})
	}
}
