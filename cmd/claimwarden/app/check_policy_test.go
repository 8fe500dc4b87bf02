package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPolicyCannotLiftParams: a policy directory of a pull request
// must not lift the shipped max-step (issue 12, item 1): check refuses it.
func TestCheckPolicyCannotLiftParams(t *testing.T) {
	const grow = "testdata/check/grow/"
	for name, tc := range map[string]struct {
		file, text, want string
		params           []string
	}{
		"params package": {
			file: "lift.rego", text: "package claimwarden.params\n\nmax_step_percent := 100000\n",
			want: "lift.rego:1: claimwarden_confinement_error: package claimwarden.params is reserved",
		},
		"params package under --param": {
			file: "lift.rego", text: "package claimwarden.params\n\nmax_step_percent := 100000\n",
			want:   "lift.rego:1: claimwarden_confinement_error: package claimwarden.params is reserved",
			params: []string{"--param", "max_step_percent=100"},
		},
		"root package under --param": {
			file: "lift.rego", text: "package claimwarden\n\nparams := {\"max_step_percent\": 100000}\n",
			want:   "lift.rego:1: claimwarden_confinement_error: package claimwarden is reserved",
			params: []string{"--param", "max_step_percent=100"},
		},
		"params data under --param": {
			file: "claimwarden/params/data.json", text: `{"disabled": ["max-step"]}`,
			want:   "policies.dirs: data.claimwarden is reserved for the engine",
			params: []string{"--param", "max_step_percent=100"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.file)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"-f", grow + "pr", "--base", grow + "base", "--policy", dir}, tc.params...)
			code, out := runCheckCLI(t, nil, args...)
			if code != 2 || !strings.Contains(out, tc.want) {
				t.Fatalf("want exit 2 and the refusal %q, got:\n%s", tc.want, out)
			}
		})
	}
}
