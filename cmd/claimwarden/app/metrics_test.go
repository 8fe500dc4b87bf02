package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/claimwarden/claimwarden/policies"
)

// The health gauges say what the chart's alerts watch: policies in force or
// not, and the commit statuses not yet posted.
func TestHealthGauges(t *testing.T) {
	ctx := context.Background()
	good, err := policies.New(ctx, policies.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(good.Stop)
	exportHealth(good, func() int { return 3 })
	want := map[string]float64{"claimwarden_policies_ready": 1, "claimwarden_policies_stale": 0, "claimwarden_commit_statuses_pending": 3}
	assertGauges(t, want)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.rego"), []byte("package claimwarden.claims\n\ndeny contains x if {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken, err := policies.New(ctx, policies.Options{Dirs: []string{dir}, PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broken.Stop)
	exportHealth(broken, nil)
	want["claimwarden_policies_ready"], want["claimwarden_commit_statuses_pending"] = 0, 0
	assertGauges(t, want)
}

func assertGauges(t *testing.T, want map[string]float64) {
	t.Helper()
	fams, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if _, ok := want[f.GetName()]; ok && len(f.GetMetric()) == 1 {
			got[f.GetName()] = f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s = %v (exported: %v), want %v", name, g, ok, v)
		}
	}
}
