package rollout

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// status is a rollout's status with claims in phases, counted and
// described as report does.
func status(reason string, phases ...v1alpha1.ClaimPhase) *v1alpha1.VolumeClaimRolloutStatus {
	st := &v1alpha1.VolumeClaimRolloutStatus{Proposal: &v1alpha1.Proposal{TemplatesHash: "h1"}}
	for i, p := range phases {
		st.Claims = append(st.Claims, v1alpha1.ClaimStatus{Name: "data-db-" + string(rune('0'+i)), Ordinal: int32(i), To: "2Gi", Phase: p})
		st.Counts.Total++
		if p == v1alpha1.ClaimCompatible {
			st.Counts.Compatible++
		}
	}
	st.Progress = string(rune('0'+st.Counts.Compatible)) + "/" + string(rune('0'+st.Counts.Total))
	st.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: reason, Message: st.Progress + " claims compatible"}}
	return st
}

func TestHeldProgress(t *testing.T) {
	const (
		r = v1alpha1.ClaimResizing
		c = v1alpha1.ClaimCompatible
		p = v1alpha1.ClaimPending
		f = v1alpha1.ClaimFailed
	)
	for _, tc := range []struct {
		name          string
		before, after *v1alpha1.VolumeClaimRolloutStatus
		held          bool
	}{
		{"a claim of the step finished, two still resize", status("Progressing", r, r, r), status("Progressing", c, r, r), true},
		{"the step's last claim finished", status("Progressing", c, c, r), status("Progressing", c, c, c), false},
		{"the next step began (one claim per step)", status("Progressing", p, r), status("Progressing", r, c), false},
		{"a claim failed", status("Progressing", r, r), status("Progressing", f, r), false},
		{"the condition's reason changed", status("Progressing", r, r), status("Stalled", c, r), false},
		{"nothing changed", status("Progressing", r, r), status("Progressing", r, r), false},
	} {
		if got := heldProgress(tc.before, tc.after); got != tc.held {
			t.Errorf("%s: held %v, want %v", tc.name, got, tc.held)
		}
	}
	other := status("Progressing", c, r, r)
	other.Proposal.TemplatesHash = "h2"
	if heldProgress(status("Progressing", r, r, r), other) {
		t.Error("a new proposal beside a finished claim was held back")
	}
	target := status("Progressing", c, r, r)
	target.Claims[0].To = "3Gi"
	if heldProgress(status("Progressing", r, r, r), target) {
		t.Error("a claim's new target was held back")
	}
}
