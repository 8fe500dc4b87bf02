package outcome

import (
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// stalledByPolicy is a rollout stalled by denials, as the report phase writes it.
func stalledByPolicy(problems []string, claims ...v1alpha1.ClaimStatus) *v1alpha1.VolumeClaimRollout {
	vcr := &v1alpha1.VolumeClaimRollout{}
	vcr.Status.Problems, vcr.Status.Claims = problems, claims
	conditions.MarkStalled(vcr, v1alpha1.ReasonPolicyDenied, "denied by policy: data-db-1")
	conditions.MarkFalse(vcr, meta.ReadyCondition, v1alpha1.ReasonPolicyDenied, "denied by policy: data-db-1")
	return vcr
}

func TestStateOfNamesTheDenialAsCheckDoes(t *testing.T) {
	immutable := v1alpha1.ClaimStatus{Name: "data-db-0", Phase: v1alpha1.ClaimDenied, Message: "immutable fields differ, claim left as it is: accessModes"}
	denied := v1alpha1.ClaimStatus{Name: "data-db-1", Phase: v1alpha1.ClaimDenied, Message: "denied by policy: max-step: +300%"}
	for _, tc := range []struct {
		name string
		vcr  *v1alpha1.VolumeClaimRollout
		want string
	}{
		{"claim", stalledByPolicy([]string{denied.Message}, immutable, denied), ClaimDenied("data-db-1", "max-step: +300%")},
		{"StatefulSet", stalledByPolicy([]string{"templates added (not acted on): logs", StatefulSetDenied("template-count: no new templates")}),
			StatefulSetDenied("template-count: no new templates")},
		{"StatefulSet before claims", stalledByPolicy([]string{denied.Message, StatefulSetDenied("freeze: not now")}, denied),
			StatefulSetDenied("freeze: not now")},
		{"no policy named", stalledByPolicy(nil, immutable), "denied by policy: data-db-1"},
	} {
		state, msg := StateOf(tc.vcr)
		if state != Failure || msg != tc.want {
			t.Errorf("%s: %s %q, want failure %q", tc.name, state, msg, tc.want)
		}
	}
}

// Issue 32: a denial that names its claim, as the shipped policies' do, is
// said with the name once.
func TestClaimDeniedSaysTheNameOnce(t *testing.T) {
	for _, tc := range []struct{ denials, want string }{
		{"increase-only: claim data-x-0 (StatefulSet shop/x): can only grow", "increase-only: claim data-x-0 (StatefulSet shop/x): can only grow"},
		{"immutable-field: immutable fields differ", "data-x-0: immutable-field: immutable fields differ"},
		// Another claim named (data-x-01) is not this one.
		{"custom: claim data-x-01 (StatefulSet shop/x): no", "data-x-0: custom: claim data-x-01 (StatefulSet shop/x): no"},
	} {
		if got := ClaimDenied("data-x-0", tc.denials); got != tc.want {
			t.Errorf("ClaimDenied(%q) = %q, want %q", tc.denials, got, tc.want)
		}
	}
}
