package diff

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkCompute diffs one template over n replicas whose PVCs all need a
// larger request, the common rollout case.
func BenchmarkCompute(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("claims=%d", n), func(b *testing.B) {
			in := Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{
				tmpl("data", "20Gi", withLabels("tier", "db")),
			}, replicas(int32(n))), MaxClaims: n}
			for i := range n {
				in.PVCs = append(in.PVCs, pvc("data-web-"+strconv.Itoa(i), "10Gi", "10Gi"))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compute(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
