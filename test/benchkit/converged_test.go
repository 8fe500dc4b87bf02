package benchkit

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

func TestConverged(t *testing.T) {
	rollout := func(ready metav1.ConditionStatus, compatible int32, claims ...v1alpha1.ClaimStatus) *v1alpha1.VolumeClaimRollout {
		v := &v1alpha1.VolumeClaimRollout{}
		v.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: ready}}
		v.Status.Counts = v1alpha1.Counts{Total: int32(len(claims)), Compatible: compatible}
		v.Status.Claims = claims
		return v
	}
	at := func(size string, phase v1alpha1.ClaimPhase) v1alpha1.ClaimStatus {
		return v1alpha1.ClaimStatus{To: size, Phase: phase}
	}
	done := at("2Gi", v1alpha1.ClaimCompatible)
	for name, tc := range map[string]struct {
		v    *v1alpha1.VolumeClaimRollout
		want bool
	}{
		"every claim compatible at size": {rollout(metav1.ConditionTrue, 2, done, done), true},
		"not Ready":                      {rollout(metav1.ConditionFalse, 2, done, done), false},
		"a claim short":                  {rollout(metav1.ConditionTrue, 1, done), false},
		"counts behind the claims":       {rollout(metav1.ConditionTrue, 1, done, done), false},
		"a claim at another size":        {rollout(metav1.ConditionTrue, 2, done, at("1Gi", v1alpha1.ClaimCompatible)), false},
		"a claim still resizing":         {rollout(metav1.ConditionTrue, 2, done, at("2Gi", v1alpha1.ClaimResizing)), false},
	} {
		if got := Converged(tc.v, "2Gi", 2); got != tc.want {
			t.Errorf("%s: Converged = %v, want %v", name, got, tc.want)
		}
	}
}
