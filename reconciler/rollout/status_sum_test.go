package rollout

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// Two reconciles on the same cached rollout a second apart compute the same
// status, but conditions.Set stamps each with its own second: the sum must
// still match, or the second writes the same status again.
func TestStatusSumIgnoresTransitionTimesOnly(t *testing.T) {
	status := func(at time.Time, msg string) v1alpha1.VolumeClaimRolloutStatus {
		return v1alpha1.VolumeClaimRolloutStatus{
			Progress: "2/3",
			Conditions: []metav1.Condition{{
				Type: meta.ReadyCondition, Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonProgressing,
				Message: msg, LastTransitionTime: metav1.NewTime(at),
			}},
		}
	}
	now := time.Date(2026, 12, 2, 1, 48, 3, 0, time.UTC)
	a := status(now, "2/3 claims compatible, 1 updating")
	if statusSum(a) != statusSum(status(now.Add(time.Second), "2/3 claims compatible, 1 updating")) {
		t.Error("statuses differing only in a condition's transition time have different sums")
	}
	if statusSum(a) == statusSum(status(now, "3/3 claims compatible")) {
		t.Error("statuses with different condition messages have the same sum")
	}
	if a.Conditions[0].LastTransitionTime.IsZero() {
		t.Error("statusSum cleared the caller's transition time")
	}
}
