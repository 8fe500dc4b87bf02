package ci

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// action is what the test reads of action.yml.
type action struct {
	Inputs map[string]struct {
		Description string `json:"description"`
		Required    bool   `json:"required"`
		Default     string `json:"default"`
	} `json:"inputs"`
	Runs struct {
		Using string `json:"using"`
		Steps []struct {
			Name  string            `json:"name"`
			Shell string            `json:"shell"`
			Env   map[string]string `json:"env"`
			Run   string            `json:"run"`
			If    string            `json:"if"`
			Uses  string            `json:"uses"`
			With  map[string]string `json:"with"`
		} `json:"steps"`
	} `json:"runs"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Author      string            `json:"author"`
	Branding    map[string]string `json:"branding"`
}

// fakeGitHub is GitHub's REST API for one repository, octo/shop, under
// /api/v3 (GitHub Enterprise): the token's user, pull request 7's
// comments, commit statuses. Every request is recorded.
type fakeGitHub struct {
	mu       sync.Mutex
	requests []string
	statuses []map[string]any
	comments []map[string]any
	token    string
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var sent map[string]any
	_ = json.Unmarshal(body, &sent)
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_ = json.NewEncoder(w).Encode(v)
	}
	switch p := r.URL.Path; {
	case p == "/api/v3/user":
		reply(map[string]any{"login": "github-actions[bot]", "id": 41898282})
	case p == "/api/v3/repos/octo/shop/issues/7/comments" && r.Method == http.MethodGet:
		reply(f.comments)
	case p == "/api/v3/repos/octo/shop/issues/7/comments" && r.Method == http.MethodPost:
		sent["id"], sent["user"] = len(f.comments)+1, map[string]any{"login": "github-actions[bot]", "id": 41898282}
		sent["html_url"] = "https://github.example/octo/shop/pull/7#issuecomment-1"
		f.comments = append(f.comments, sent)
		reply(sent)
	case strings.HasPrefix(p, "/api/v3/repos/octo/shop/statuses/") && r.Method == http.MethodPost:
		sent["sha"] = strings.TrimPrefix(p, "/api/v3/repos/octo/shop/statuses/")
		f.statuses = append(f.statuses, sent)
		reply(sent)
	case strings.HasPrefix(p, "/api/v3/repos/octo/shop/commits/") && strings.HasSuffix(p, "/statuses"):
		reply([]any{})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// githubExpr is the pattern of a GitHub Actions expression.
var githubExpr = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// The Action, run as a runner runs its composite step: the release's
// binary, verified, checks the pull request against its target branch;
// the statuses and the comment reach GitHub as the token's; the steps'
// annotations are printed; the SARIF file the upload step reads is valid
// and holds the denial on the changed file. The upload step reads the
// file the check step wrote. A binary that does not match its checksum
// is never run.
func TestGitHubAction(t *testing.T) {
	var a action
	readYAML(t, "action.yml", 0, &a)
	if a.Runs.Using != "composite" || len(a.Runs.Steps) != 2 {
		t.Fatalf("action.yml: %+v; want a composite action of two steps (check, upload)", a)
	}
	check, upload := a.Runs.Steps[0], a.Runs.Steps[1]
	if check.Shell != "bash" || upload.Uses != "github/codeql-action/upload-sarif@v3" {
		t.Fatalf("steps %+v and %+v; want a bash step and the SARIF upload", check, upload)
	}

	clone, head := pullRequest(t)
	gh := &fakeGitHub{token: "ghs_0123456789abcdef"}
	srv := httptest.NewServer(gh)
	defer srv.Close()
	temp := t.TempDir()
	values := map[string]string{
		"github.base_ref":                    "main",
		"github.server_url":                  srv.URL,
		"github.repository":                  "octo/shop",
		"github.event.pull_request.head.sha": head,
		"github.event.pull_request.number":   "7",
		"github.run_id":                      "42",
		"runner.temp":                        temp,
		// uses: claimwarden/claimwarden@<release>: that release runs
		// unless the version input names another.
		"github.action_ref": version,
	}
	for name, in := range a.Inputs {
		values["inputs."+name] = in.Default
	}
	values["inputs.token"] = gh.token

	run := func(releases string) (int, string, string) {
		env := map[string]string{"GITHUB_ACTION_PATH": repoRoot(t), "CLAIMWARDEN_RELEASES": "file://" + releases}
		for k, v := range check.Env {
			env[k] = expand(t, v, githubExpr, values)
		}
		return runScript(t, clone, check.Run, env)
	}

	code, stdout, stderr := run(release(t, []byte("#!/bin/sh\necho pwned\n")))
	if code != 2 || !strings.Contains(stderr, "does not match its checksum") || strings.Contains(stdout, "pwned") || len(gh.requests) > 0 {
		t.Fatalf("a tampered binary: exit code %d, requests %q\n%s%s; want 2, naming the checksum, not run", code, gh.requests, stdout, stderr)
	}

	code, stdout, stderr = run(release(t, nil))
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (denied)\n--- stdout\n%s--- stderr\n%s", code, stdout, stderr)
	}
	if !regexp.MustCompile(`(?m)^::error file=deploy/big\.yaml,line=\d+,title=shop/big%3A claim data-big-0 10Gi → 40Gi denied by max-step::`).MatchString(stdout) ||
		!strings.Contains(stdout, "::notice title=claimwarden check::denied:") {
		t.Errorf("no annotation of the denial on deploy/big.yaml:\n%s", stdout)
	}

	sarifFile := expand(t, upload.With["sarif_file"], githubExpr, values)
	if sarifFile != filepath.Join(temp, "claimwarden.sarif") || upload.With["category"] != "claimwarden" || !strings.Contains(upload.If, "always()") {
		t.Errorf("the upload reads %s (category %q, if %q); want the check step's %s, always", sarifFile, upload.With["category"], upload.If, filepath.Join(temp, "claimwarden.sarif"))
	}
	data, err := os.ReadFile(sarifFile)
	if err != nil {
		t.Fatal(err)
	}
	log, err := sarif.FromBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Validate(); err != nil {
		t.Errorf("the uploaded SARIF is not valid: %v", err)
	}
	var denied []string
	for _, r := range log.Runs[0].Results {
		if r.Level == "error" && len(r.Locations) > 0 {
			denied = append(denied, *r.RuleID+" on "+*r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
		}
	}
	if !slices.Equal(denied, []string{"max-step on deploy/big.yaml", "max-step on deploy/big.yaml"}) {
		t.Errorf("SARIF errors %q, want max-step on deploy/big.yaml for each of its two claims", denied)
	}

	gh.mu.Lock()
	defer gh.mu.Unlock()
	assertPosted(t, posted{statuses: gh.statuses, contextKey: "context", head: head, targetURL: srv.URL + "/octo/shop/actions/runs/42",
		denied: "failure", comments: gh.comments})
}
