package rollout

import (
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// heldProgress reports whether the status after may stay unwritten over
// before: the only news is that claims of a step in flight finished
// resizing (Resizing → Compatible) while another claim still resizes, and
// what is counted from them (counts, progress, condition messages). The
// write comes with the step's last claim, or with anything else: one status
// write per step, not one per claim that finished (issue 31). A step of
// one claim (the default) holds nothing back, nor does any other change of
// phase, of a claim's target or of a condition's status or reason.
func heldProgress(before, after *v1alpha1.VolumeClaimRolloutStatus) bool {
	if len(before.Claims) != len(after.Claims) {
		return false
	}
	finished, resizing := 0, 0
	for i, a := range after.Claims {
		b := before.Claims[i]
		if a.Phase == v1alpha1.ClaimResizing {
			resizing++
		}
		if b == a {
			continue
		}
		if b.Phase != v1alpha1.ClaimResizing || a.Phase != v1alpha1.ClaimCompatible {
			return false
		}
		if b.Phase, b.Message = a.Phase, a.Message; b != a {
			return false
		}
		finished++
	}
	if finished == 0 || resizing == 0 || len(before.Conditions) != len(after.Conditions) {
		return false
	}
	for i, a := range after.Conditions {
		b := before.Conditions[i]
		if a.Type != b.Type || a.Status != b.Status || a.Reason != b.Reason || a.ObservedGeneration != b.ObservedGeneration {
			return false
		}
	}
	rest := func(s *v1alpha1.VolumeClaimRolloutStatus) *v1alpha1.VolumeClaimRolloutStatus {
		c := s.DeepCopy()
		c.Claims, c.Counts, c.Progress, c.Conditions = nil, v1alpha1.Counts{}, "", nil
		return c
	}
	return equality.Semantic.DeepEqual(rest(before), rest(after))
}
