package plan

import (
	"fmt"
	"testing"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// BenchmarkBuild plans n claims that all need a patch, the start of a rollout:
// every claim is sorted and gets a message.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("claims=%d", n), func(b *testing.B) {
			var r diff.Result
			for i := range n {
				r.Claims = append(r.Claims, claim("data", int32(i), "grow"))
			}
			o := Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 2}
			b.ReportAllocs()
			for b.Loop() {
				if p := Build(r, o); len(p.Patch) != min(n, 2) {
					b.Fatalf("patched %d claims", len(p.Patch))
				}
			}
		})
	}
}
