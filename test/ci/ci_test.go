// Package ci runs the GitHub Action (action.yml) and the GitLab CI/CD
// component (templates/check.yml) as their runners would: their entry
// script, ci/check.sh, with the environment variables each maps from its
// inputs and the runner's context, in a clone of a pull request's
// repository, against a fake of the host's API on httptest (the hosts we
// cannot run) that records every request, and a release server with the
// binary bin/claimwarden and its checksum.
package ci

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const version = "v0.9.0-ci"

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// release is a release directory as `make release` publishes it: the
// binary of this machine's architecture and checksums.txt; binary is
// what is served under the binary's name (bin/claimwarden, or another to
// check the checksum).
func release(t *testing.T, binary []byte) string {
	t.Helper()
	bin, err := controllerproc.BinaryPath()
	if err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if binary == nil {
		binary = real
	}
	dir := filepath.Join(t.TempDir(), version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := "claimwarden-linux-" + runtime.GOARCH
	sum := sha256.Sum256(real)
	checksums := fmt.Sprintf("%s  install.yaml\n%s  %s\n", strings.Repeat("0", 64), hex.EncodeToString(sum[:]), name)
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(checksums), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), binary, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(dir)
}

// pullRequest is a clone of a repository whose main branch has the grow
// example's base manifests under deploy/ (its StorageClass too) and whose
// checked-out branch grow has its proposal: shop/small 10Gi → 15Gi (allowed), shop/big 10Gi
// → 40Gi (max-step denies); head is its commit.
func pullRequest(t *testing.T) (clone, head string) {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	origin, clone := filepath.Join(dir, "origin.git"), filepath.Join(dir, "clone")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=ci", "GIT_AUTHOR_EMAIL=ci@example.com", "GIT_COMMITTER_NAME=ci",
			"GIT_COMMITTER_EMAIL=ci@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(from string) {
		names, err := filepath.Glob(filepath.Join(root, "cmd/claimwarden/app/testdata/check/grow", from, "*.yaml"))
		if err != nil || len(names) == 0 {
			t.Fatalf("the grow example's %s: %v", from, err)
		}
		for _, path := range names {
			name := filepath.Base(path)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(clone, "deploy"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(clone, "deploy", name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git(clone, "add", "deploy")
		git(clone, "commit", "-q", "-m", from)
	}
	git(dir, "init", "-q", "--bare", "-b", "main", origin)
	git(dir, "clone", "-q", origin, clone)
	commit("base")
	git(clone, "push", "-q", "origin", "HEAD:main")
	git(clone, "checkout", "-q", "-b", "grow")
	commit("pr")
	git(clone, "push", "-q", "origin", "grow")
	// As a runner's checkout: the pull request's commit, no local main.
	git(clone, "branch", "-q", "-D", "main")
	git(clone, "update-ref", "-d", "refs/remotes/origin/main")
	return clone, git(clone, "rev-parse", "HEAD")
}

// expand replaces each ${{ expr }} (GitHub; expr may be a || b) or
// $[[ expr ]] and $VAR (GitLab) in s with its value in values; an expression the test does not
// know fails it, so that a change of action.yml or templates/check.yml is
// a change the test sees.
func expand(t *testing.T, s string, pattern *regexp.Regexp, values map[string]string) string {
	t.Helper()
	return pattern.ReplaceAllStringFunc(s, func(m string) string {
		// a || b is a when a is not empty, else b (GitHub's falsy "").
		for _, expr := range strings.Split(pattern.FindStringSubmatch(m)[1], "||") {
			expr = strings.TrimSpace(expr)
			v, ok := values[expr]
			if !ok {
				t.Fatalf("%q: the test knows no value of %q", s, expr)
			}
			if v != "" {
				return v
			}
		}
		return ""
	})
}

// runScript runs command with bash as the runner's shell runs a step, in
// dir, with env only (and PATH, HOME).
func runScript(t *testing.T, dir, command string, env map[string]string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

// readYAML reads the YAML document doc (0-based) of the repository's file
// path into v.
func readYAML(t *testing.T, path string, doc int, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), path))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(data), "\n---\n")
	if doc >= len(docs) {
		t.Fatalf("%s has %d YAML documents", path, len(docs))
	}
	if err := yaml.UnmarshalStrict([]byte(docs[doc]), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// posted is what a fake host received: commit statuses (their context
// under contextKey, a denial's state denied) and pull request comments.
type posted struct {
	statuses, comments []map[string]any
	contextKey, head   string
	targetURL, denied  string
}

// assertPosted checks the grow example's statuses, shop/big denied and
// shop/small allowed, on head and linking the job, and one comment with
// the plan.
func assertPosted(t *testing.T, p posted) {
	t.Helper()
	states := map[string]string{}
	for _, s := range p.statuses {
		if s["sha"] != p.head || s["target_url"] != p.targetURL {
			t.Errorf("status %v: want it on %s, linking %s", s, p.head, p.targetURL)
		}
		context, _ := s[p.contextKey].(string)
		states[context], _ = s["state"].(string)
	}
	if states["claimwarden/shop/big"] != p.denied || states["claimwarden/shop/small"] != "success" || len(states) != 2 {
		t.Errorf("statuses %v, want shop/big %s and shop/small success", states, p.denied)
	}
	if len(p.comments) != 1 || !strings.Contains(fmt.Sprint(p.comments[0]["body"]), "### ❌ claimwarden check: denied") {
		t.Errorf("comments %v, want one with the plan", p.comments)
	}
}
