package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckKustomizeBoundsInput: `check -k` reads within the Flux build's
// limits; past one it is an input error naming the file and the limit.
func TestCheckKustomizeBoundsInput(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"kustomization.yaml": "resources:\n- docs.yaml\n",
		"docs.yaml":          strings.Repeat("---\n", 1<<18),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out := runCheckCLI(t, nil, "-k", dir, "--base", "testdata/check/grow/base")
	if code != 2 {
		t.Errorf("exit code %d, want 2:\n%s", code, out)
	}
	if !strings.Contains(out, "docs.yaml: the build reads more than 10000 YAML documents, its limit") {
		t.Errorf("output names neither the file nor the limit:\n%s", out)
	}
}
