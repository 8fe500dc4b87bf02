package main

import (
	"slices"
	"testing"
)

// The pull request's diff is printed like a commit's change: the file, then
// the lines it removes and adds, and it must be the size line only.
func TestDiffChanges(t *testing.T) {
	diff := `diff --git a/statefulset.yaml b/statefulset.yaml
index 3f1c2a1..9b2d4e7 100644
--- a/statefulset.yaml
+++ b/statefulset.yaml
@@ -24,4 +24,4 @@ spec:
       storageClassName: demo-ssd
       resources:
         requests:
-          storage: 1Gi
+          storage: 2Gi
`
	got := diffChanges(diff)
	want := []string{"statefulset.yaml", "-          storage: 1Gi", "+          storage: 2Gi"}
	if !slices.Equal(got, want) {
		t.Errorf("diffChanges = %q, want %q", got, want)
	}
	if !sizeLineOnly(got) {
		t.Errorf("sizeLineOnly(%q) = false", got)
	}
	for _, change := range [][]string{
		nil,
		{"statefulset.yaml", "-          storage: 1Gi", "+          storage: 3Gi"},
		{"statefulset.yaml", "+          storage: 2Gi", "-          storage: 1Gi"},
		{"statefulset.yaml", "-  replicas: 3", "+  replicas: 4"},
	} {
		if sizeLineOnly(change) {
			t.Errorf("sizeLineOnly(%q) = true", change)
		}
	}
}

// A long pull request description is cut, saying how much was left out.
func TestHead(t *testing.T) {
	if got := head("a\nb\nc\n", 2); got != "a\nb\n[... 1 more lines]" {
		t.Errorf("head = %q", got)
	}
	if got := head("a\nb\n", 2); got != "a\nb" {
		t.Errorf("head = %q", got)
	}
}
