package rollout

import (
	"slices"
	"testing"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// The outcome's denials are every claim's and the StatefulSet-level
// change's, each policy and message once, in the order asked; an allowed
// answer adds none.
func TestDenialsOf(t *testing.T) {
	a := policies.Reason{Policy: "max-step", Message: "a"}
	b := policies.Reason{Policy: "quota-fits", Message: "b"}
	c := policies.Reason{Policy: "template-count", Message: "c"}
	answers := gate.Result{
		Claims: []gate.Answer{
			{Verdict: policies.Verdict{Denials: []policies.Reason{a, b}}},
			{Verdict: policies.Verdict{Allowed: true}},
			{Verdict: policies.Verdict{Denials: []policies.Reason{a}}},
		},
		StatefulSet: &gate.Answer{Verdict: policies.Verdict{Denials: []policies.Reason{c}}},
	}
	want := []outcome.Denial{{Policy: "max-step", Message: "a"}, {Policy: "quota-fits", Message: "b"}, {Policy: "template-count", Message: "c"}}
	if got := denialsOf(answers); !slices.Equal(got, want) {
		t.Errorf("denials %v, want %v", got, want)
	}
	if got := denialsOf(gate.Result{}); got != nil {
		t.Errorf("denials of no answers %v, want none", got)
	}
}
