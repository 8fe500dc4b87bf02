package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docs/architecture.md names every package of the core, the policies and
// the integrations (as `reconciler/rollout`), so that the map a newcomer
// reads has no blank where the code has a package.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	const module = "github.com/claimwarden/claimwarden/"
	page, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "./reconciler/...", "./policies/...", "./integrations/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 20 {
		t.Fatalf("go list named %d packages: %q", len(pkgs), pkgs)
	}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p, module)
		if rel == "reconciler" {
			continue // the layering test's package
		}
		if !strings.Contains(string(page), "`"+rel+"`") {
			t.Errorf("docs/architecture.md does not name `%s`", rel)
		}
	}
}
