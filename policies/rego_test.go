package policies_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/tester"
)

// shippedPackage is the only package the engine queries
// (data.claimwarden.claims.deny and .warn); a shipped file in any other
// package would silently never be asked.
const shippedPackage = "data.claimwarden.claims"

// loadShipped parses the .rego files of this directory only: policies/testdata
// and other subdirectories hold the engine's test fixtures (deliberately
// broken policies among them), which are not shipped and not unit-tested here.
func loadShipped(t *testing.T) map[string]*ast.Module {
	t.Helper()
	paths, err := filepath.Glob("*.rego")
	if err != nil {
		t.Fatal(err)
	}
	modules := make(map[string]*ast.Module, len(paths))
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ast.ParseModuleWithOpts(p, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatalf("parsing %s: %v", p, err)
		}
		modules[p] = m
	}
	return modules
}

func isTestFile(path string) bool { return strings.HasSuffix(path, "_test.rego") }

// TestShippedPoliciesHaveTests holds the layout the issue asks for: every
// policy beside its _test.rego, everything in the package the engine queries.
func TestShippedPoliciesHaveTests(t *testing.T) {
	modules := loadShipped(t)
	policies := 0
	for path, m := range modules {
		if got := m.Package.Path.String(); got != shippedPackage {
			t.Errorf("%s: package %s, want %s", path, got, shippedPackage)
		}
		if isTestFile(path) {
			if _, ok := modules[strings.TrimSuffix(path, "_test.rego")+".rego"]; !ok {
				t.Errorf("%s tests no policy: %s is missing", path, strings.TrimSuffix(path, "_test.rego")+".rego")
			}
			continue
		}
		policies++
		if _, ok := modules[strings.TrimSuffix(path, ".rego")+"_test.rego"]; !ok {
			t.Errorf("%s has no %s beside it", path, strings.TrimSuffix(path, ".rego")+"_test.rego")
		}
	}
	if policies == 0 {
		t.Fatal("no shipped .rego policies found in policies/")
	}
}

// TestRegoUnitTests runs every Rego test in this directory, as
// `opa test policies/` does, so that `go test ./...` fails on a broken policy.
// It also requires every line of the shipped (non-test) files to be covered:
// a rule no test reaches is a rule nobody has seen allow or deny.
func TestRegoUnitTests(t *testing.T) {
	modules := loadShipped(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	coverage := cover.New()
	ch, err := tester.NewRunner().
		SetModules(modules).
		SetCoverageQueryTracer(coverage).
		// A builtin error (say units.parse_bytes on a bad string) would be
		// undefined, not an error, under the defaults; tests must not pass
		// because of one.
		RaiseBuiltinErrors(true).
		CapturePrintOutput(true).
		RunTests(ctx, nil)
	if err != nil {
		t.Fatalf("compiling the policies and their tests: %v", err)
	}

	ran := map[string]int{} // test file → tests run
	total := 0
	for r := range ch {
		total++
		ran[r.Location.File]++
		if r.Pass() {
			continue
		}
		msg := r.String()
		if r.Error != nil {
			msg += ": " + r.Error.Error()
		}
		if r.FailedAt != nil {
			msg += "\n\tfailed at " + r.FailedAt.Location.String() + ": " + r.FailedAt.String()
		}
		if len(r.Output) > 0 {
			msg += "\n\tprint output: " + string(r.Output)
		}
		t.Errorf("%s", msg)
	}
	if total == 0 {
		t.Fatal("no Rego tests ran")
	}
	t.Logf("%d Rego tests ran", total)

	for path := range modules {
		if isTestFile(path) && ran[path] == 0 {
			t.Errorf("%s: no test ran (test rules must be named test_*)", path)
		}
	}

	report := coverage.Report(modules)
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range modules {
			if !isTestFile(p) && !yield(p) {
				return
			}
		}
	}) {
		fr := report.Files[path]
		if fr == nil {
			t.Errorf("%s: no coverage recorded", path)
			continue
		}
		// A range may be reported once per coverage pass; name each once.
		seen := map[[2]int]bool{}
		for _, rng := range fr.NotCovered {
			lines := [2]int{rng.Start.Row, rng.End.Row}
			if !seen[lines] {
				seen[lines] = true
				t.Errorf("%s: lines %d-%d are not covered by any Rego test", path, lines[0], lines[1])
			}
		}
	}
}
