package app

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/check")

// revisions match the policy revision, which changes with every edit of
// the shipped policies; goldens hold a placeholder.
var revisions = regexp.MustCompile("(\"policyRevision\": \"|policy revision `)[0-9a-f]+")

// golden compares got with testdata/check/<name>.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "check", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("output differs from %s (-update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// runCheck runs `claimwarden check args...` in-process and renders what it
// did for a golden file: exit code, stdout, stderr.
func runCheckCLI(t *testing.T, environ []string, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := execute(context.Background(), append([]string{"check"}, args...), environ, &stdout, &stderr)
	out := fmt.Sprintf("$ claimwarden check %s\nexit code %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	return code, revisions.ReplaceAllString(out, "${1}REVISION")
}

func TestCheckGolden(t *testing.T) {
	const (
		grow  = "testdata/check/grow/"
		mixed = "testdata/check/mixed/"
		bad   = "testdata/check/bad/"
		evil  = "testdata/check/hostile/"
	)
	cases := []struct {
		name string
		code int
		args []string
	}{
		// One StatefulSet grows 10Gi → 15Gi, another 10Gi → 40Gi: max-step denies the second.
		{"grow-table", 1, []string{"-f", grow + "pr", "--base", grow + "base"}},
		{"grow-json", 1, []string{"-f", grow + "pr", "--base", grow + "base", "-o", "json"}},
		{"grow-markdown", 1, []string{"-f", grow + "pr", "--base", grow + "base", "-o", "markdown"}},
		// A parameter lets the larger step through.
		{"grow-param", 0, []string{"-f", grow + "pr", "--base", grow + "base", "--param", "max_step_percent=400"}},
		// Prices show capacity and monthly cost per StatefulSet, and a total.
		{"grow-cost-table", 1, []string{"-f", grow + "pr", "--base", grow + "base", "--param", "storage_class_prices={fast: 0.17}"}},
		{"grow-cost-json", 1, []string{"-f", grow + "pr", "--base", grow + "base", "--param", "storage_class_prices={fast: 0.17}", "-o", "json"}},
		{"grow-cost-markdown", 1, []string{"-f", grow + "pr", "--base", grow + "base", "--param", "storage_class_prices={fast: 0.17}", "-o", "markdown"}},
		// max-cost-increase denies +1.70 a claim above 1.50; an unpriced class is warned about.
		{"grow-cost-limit", 1, []string{"-f", grow + "pr", "--base", grow + "base", "--param", "storage_class_prices={fast: 0.17}", "--param", "max_cost_increase=1.5", "--param", "max_step_percent=400"}},
		{"grow-cost-unpriced", 1, []string{"-f", grow + "pr", "--base", grow + "base", "--param", "storage_class_prices={slow: 0.05}", "--param", "max_cost_increase=1"}},
		{"bad-prices", 2, []string{"-f", grow + "pr", "--base", grow + "base", "--param", "storage_class_prices={fast: cheap}"}},
		{"nothing", 0, []string{"-f", grow + "base", "--base", grow + "base"}},
		// -k builds the kustomization as Flux does: its patch raises small to 15Gi.
		{"kustomize", 0, []string{"-k", "testdata/check/kustomize", "--base", grow + "base"}},
		{"mixed-table", 1, []string{"-f", mixed + "pr", "--base", mixed + "base"}},
		{"mixed-json", 1, []string{"-f", mixed + "pr", "--base", mixed + "base", "-o", "json"}},
		{"mixed-markdown", 1, []string{"-f", mixed + "pr", "--base", mixed + "base", "-o", "markdown"}},
		// Where CI shows findings on the changed line: code scanning
		// (SARIF), test reports (JUnit), GitHub Actions annotations.
		{"mixed-sarif", 1, []string{"-f", mixed + "pr", "--base", mixed + "base", "-o", "sarif"}},
		{"mixed-junit", 1, []string{"-f", mixed + "pr", "--base", mixed + "base", "-o", "junit"}},
		{"mixed-github", 1, []string{"-f", mixed + "pr", "--base", mixed + "base", "-o", "github"}},
		// Bad input: exit 2, naming file, line and field.
		{"bad-yaml", 2, []string{"-f", bad + "invalid.yaml", "--base", grow + "base"}},
		{"bad-kind", 2, []string{"-f", bad + "kind.yaml", "--base", grow + "base"}},
		{"bad-quantities", 2, []string{"-f", bad + "quantities.yaml", "--base", grow + "base"}},
		{"bad-twice", 2, []string{"-f", bad + "twice", "--base", grow + "base"}},
		{"bad-base", 2, []string{"-f", grow + "pr", "--base", bad + "invalid.yaml"}},
		{"bad-strategy", 2, []string{"-f", bad + "strategy.yaml", "--base", grow + "base"}},
		{"missing-file", 2, []string{"-f", bad + "nope.yaml", "--base", grow + "base"}},
		// Text from manifests, quoted by a policy, cannot forge the comment
		// (markdown) or the terminal (table): it is escaped.
		{"hostile-markdown", 1, []string{"-f", evil + "pr", "--base", evil + "base", "--policy", evil + "policy", "-o", "markdown"}},
		{"hostile-table", 1, []string{"-f", evil + "pr", "--base", evil + "base", "--policy", evil + "policy"}},
		{"hostile-github", 1, []string{"-f", evil + "pr", "--base", evil + "base", "--policy", evil + "policy", "-o", "github"}},
		// Names the API server would refuse are input errors.
		{"bad-names", 2, []string{"-f", bad + "names.yaml", "--base", grow + "base"}},
		// Missing replicas: a warning, and the default of 1.
		{"no-replicas", 0, []string{"-f", bad + "noreplicas.yaml", "--base", grow + "base"}},
		// Usage errors.
		{"usage-no-base", 2, []string{"-f", grow + "pr"}},
		{"usage-both", 2, []string{"-f", grow + "pr", "--base", grow + "base", "--kubeconfig", "k"}},
		{"usage-output", 2, []string{"-f", grow + "pr", "--base", grow + "base", "-o", "yaml"}},
		{"usage-post-status", 2, []string{"-f", grow + "pr", "--base", grow + "base", "--post-status", "--revision", "main"}},
		{"usage-comment", 2, []string{"-f", grow + "pr", "--base", grow + "base", "--comment", "--repository", "https://github.com/o/r"}},
		{"usage-allow-new", 2, []string{"-f", grow + "pr", "--kubeconfig", "k", "--allow-new"}},
		{"usage-max-input-bytes", 2, []string{"-f", grow + "pr", "--base", grow + "base", "--max-input-bytes", "-1Mi"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := runCheckCLI(t, nil, c.args...)
			if code != c.code {
				t.Errorf("exit code %d, want %d:\n%s", code, c.code, out)
			}
			golden(t, c.name, out)
		})
	}
}

// TestCheckStdin reads manifests from standard input, as in
// `git show origin/main:db.yaml | claimwarden check -f db.yaml --base -`,
// in a process of its own.
func TestCheckStdin(t *testing.T) {
	var base strings.Builder
	for _, f := range []string{"small.yaml", "storageclass.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata/check/grow/base", f))
		if err != nil {
			t.Fatal(err)
		}
		base.WriteString("---\n" + string(b))
	}
	for _, c := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"-f", "testdata/check/grow/pr/small.yaml", "--base", "-"}, base.String(), "shop/small   data-small-0  10Gi  15Gi  allowed\n"},
		{[]string{"-f", "-", "--base", "testdata/check/grow/base", "-o", "json"}, "{\"apiVersion\": \"apps/v1\", \"kind\": \"StatefulSet\", \"metadata\": {\"name\": \"big\", \"namespace\": \"shop\"},\n \"spec\": {\"replicas\": 1, \"volumeClaimTemplates\": [{\"metadata\": {\"name\": \"data\"},\n  \"spec\": {\"accessModes\": [\"ReadWriteOnce\"], \"storageClassName\": \"fast\", \"resources\": {\"requests\": {\"storage\": \"10Gi\"}}}}]}}\n", `"file": "stdin",`},
	} {
		cmd := exec.Command(os.Args[0], append([]string{"check"}, c.args...)...)
		cmd.Env = []string{mainEnv + "=1"}
		cmd.Stdin = strings.NewReader(c.stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("check %v: %v\n%s%s", c.args, err, stdout.String(), stderr.String())
			continue
		}
		if !strings.Contains(stdout.String(), c.want) || strings.Contains(stdout.String(), "\x1b[") {
			t.Errorf("check %v printed:\n%s\nwant %q and no colour (not a terminal)", c.args, stdout.String(), c.want)
		}
	}
}
