package main

import (
	"slices"
	"testing"
)

// A commit's change is printed as the lines it changes, file by file, so
// that a chart bump shows its version next to the size.
func TestChangedLines(t *testing.T) {
	o := options{replicas: 3}
	got := changedLines(helmTool{}.files(o, sizeBefore), helmTool{}.files(o, sizeAfter))
	want := []string{
		"chart/Chart.yaml", "-version: 0.1.0", "+version: 0.2.0",
		"chart/values.yaml", "-size: 1Gi", "+size: 2Gi",
	}
	if !slices.Equal(got, want) {
		t.Errorf("helm chart bump: %q, want %q", got, want)
	}
	got = changedLines(fluxTool{}.files(o, sizeBefore), fluxTool{}.files(o, sizeAfter))
	want = []string{"statefulset.yaml", "-          storage: 1Gi", "+          storage: 2Gi"}
	if !slices.Equal(got, want) {
		t.Errorf("Flux manifest: %q, want %q", got, want)
	}
	got = changedLines(map[string]string{"a": "x\ny\n"}, map[string]string{"a": "x\n", "b": "new\n"})
	want = []string{"a", "-y", "b", "+new"}
	if !slices.Equal(got, want) {
		t.Errorf("lines and files added or removed: %q, want %q", got, want)
	}
	if got := changedLines(fluxTool{}.files(o, sizeAfter), fluxTool{}.files(o, sizeAfter)); len(got) != 0 {
		t.Errorf("no change: %q", got)
	}
}
