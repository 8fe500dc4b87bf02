package gitedit

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/sandbox"
)

// The cost of rendering out of process: one job of two renders (what a
// search for the value that sets a size starts with), in this process and
// in a sandbox child. The child is this test binary, or the binary named by
// CLAIMWARDEN_BIN (bin/claimwarden: the controller's own start-up, the
// overhead in production).
func BenchmarkRender(b *testing.B) {
	job := RenderJob{Chart: dbChart(), Release: "pg", Namespace: "shop",
		Layers: [][]byte{[]byte("primary: {persistence: {size: 10Gi}}\n")}, Variants: [][]byte{nil, nil}}
	b.Run("in-process", func(b *testing.B) {
		in, err := json.Marshal(job)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := renderInSandbox(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sandbox", func(b *testing.B) {
		bin := os.Getenv("CLAIMWARDEN_BIN")
		if bin == "" {
			var err error
			if bin, err = os.Executable(); err != nil {
				b.Fatal(err)
			}
		}
		r := SandboxRenderer{Runner: sandbox.NewRunner(bin, sandbox.Limits{}, 1)}
		var rss int64
		r.Runner.Observe = func(u sandbox.Usage) { rss = max(rss, u.MaxRSS) }
		for b.Loop() {
			if _, err := r.Render(b.Context(), job); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(rss)/(1<<20), "child-peak-MiB")
	})
}
