package rollout

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// The rollout's apply of a claim GrowNow grew, decided from a cache that
// does not hold the growth yet, keeps the grown size: it never lowers the
// request. A larger apply, or another claim's, is left as it is.
func TestRolloutApplyKeepsAGrowthNow(t *testing.T) {
	w := NewWriter(nil, nil)
	w.grownNow.Add(types.NamespacedName{Namespace: "shop", Name: "data-web-0"}, resource.MustParse("15Gi"))
	apply := func(name, size string) string {
		pvc := corev1ac.PersistentVolumeClaim(name, "shop").WithSpec(corev1ac.PersistentVolumeClaimSpec().
			WithResources(corev1ac.VolumeResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)})))
		w.floor(pvc)
		q := (*pvc.Spec.Resources.Requests)[corev1.ResourceStorage]
		return q.String()
	}
	for _, c := range []struct{ claim, apply, want string }{
		{"data-web-0", "12Gi", "15Gi"},
		{"data-web-0", "20Gi", "20Gi"},
		{"data-web-1", "12Gi", "12Gi"},
	} {
		if got := apply(c.claim, c.apply); got != c.want {
			t.Errorf("%s applied at %s: %s, want %s", c.claim, c.apply, got, c.want)
		}
	}
}
