package benchkit

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// Converged: the rollout is Ready with all of its replicas' claims
// Compatible at size.
func Converged(v *v1alpha1.VolumeClaimRollout, size string, replicas int) bool {
	if !apimeta.IsStatusConditionTrue(v.Status.Conditions, "Ready") ||
		v.Status.Counts.Total != int32(replicas) || v.Status.Counts.Compatible != int32(replicas) ||
		len(v.Status.Claims) != replicas {
		return false
	}
	for _, c := range v.Status.Claims {
		if c.To != size || c.Phase != v1alpha1.ClaimCompatible {
			return false
		}
	}
	return true
}
