package ci

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	junit "github.com/joshdk/go-junit"
)

// component is what the test reads of templates/check.yml: its spec, and
// its job.
type componentSpec struct {
	Spec struct {
		Inputs map[string]struct {
			Description string  `json:"description"`
			Default     *string `json:"default"`
		} `json:"inputs"`
	} `json:"spec"`
}

type componentJob struct {
	Job struct {
		Stage     string              `json:"stage"`
		Image     string              `json:"image"`
		Rules     []map[string]string `json:"rules"`
		Variables map[string]string   `json:"variables"`
		Script    []string            `json:"script"`
		Artifacts struct {
			When    string            `json:"when"`
			Reports map[string]string `json:"reports"`
		} `json:"artifacts"`
	} `json:"claimwarden-check"`
}

// fakeGitLab is GitLab's REST API for one project, group/shop: the
// token's user, merge request 7's notes, commit statuses.
type fakeGitLab struct {
	mu       sync.Mutex
	statuses []map[string]any
	notes    []map[string]any
	token    string
}

func (f *fakeGitLab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("PRIVATE-TOKEN") != f.token {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var sent map[string]any
	_ = json.Unmarshal(body, &sent)
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	const notes = "/api/v4/projects/group%2Fshop/merge_requests/7/notes"
	switch p := r.URL.EscapedPath(); {
	case p == "/api/v4/user":
		reply(http.StatusOK, map[string]any{"id": 9, "username": "project_9_bot"})
	case p == notes && r.Method == http.MethodGet:
		reply(http.StatusOK, f.notes)
	case p == notes && r.Method == http.MethodPost:
		sent["id"], sent["author"] = len(f.notes)+1, map[string]any{"id": 9, "username": "project_9_bot"}
		f.notes = append(f.notes, sent)
		reply(http.StatusCreated, sent)
	case strings.HasPrefix(p, "/api/v4/projects/group%2Fshop/statuses/") && r.Method == http.MethodPost:
		sent["sha"] = strings.TrimPrefix(p, "/api/v4/projects/group%2Fshop/statuses/")
		f.statuses = append(f.statuses, sent)
		reply(http.StatusCreated, sent)
	case strings.HasPrefix(p, "/api/v4/projects/group%2Fshop/repository/commits/"):
		reply(http.StatusOK, []any{})
	default:
		reply(http.StatusNotFound, map[string]any{"message": "404 Not found"})
	}
}

// GitLab's component expressions: $[[ inputs.x ]] in the job, then $VAR
// of the runner's predefined variables.
var (
	inputExpr    = regexp.MustCompile(`\$\[\[(.*?)\]\]`)
	variableExpr = regexp.MustCompile(`\$([A-Z_]+)`)
)

// The component, run as a GitLab runner runs its job: its script is
// ci/check.sh verbatim; with the job's variables, the release's binary,
// verified, checks the merge request against its target branch; the
// statuses and the note reach GitLab as the token's; the JUnit report
// the job keeps as its artifact holds the denial, as GitLab's test
// report reads it.
func TestGitLabComponent(t *testing.T) {
	var spec componentSpec
	var job componentJob
	readYAML(t, "templates/check.yml", 0, &spec)
	readYAML(t, "templates/check.yml", 1, &job)
	script, err := os.ReadFile(filepath.Join(repoRoot(t), "ci/check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if len(job.Job.Script) != 1 || job.Job.Script[0] != string(script) {
		t.Fatalf("the component's script is not ci/check.sh verbatim:\n%q", job.Job.Script)
	}
	report := job.Job.Artifacts.Reports["junit"]
	if job.Job.Artifacts.When != "always" || report == "" {
		t.Fatalf("artifacts %+v: want the JUnit report kept always", job.Job.Artifacts)
	}

	clone, head := pullRequest(t)
	gl := &fakeGitLab{token: "glpat-0123456789abcdef"}
	srv := httptest.NewServer(gl)
	defer srv.Close()
	inputs := map[string]string{}
	for name, in := range spec.Spec.Inputs {
		if in.Default != nil {
			inputs["inputs."+name] = *in.Default
		}
	}
	inputs["inputs.version"] = version
	predefined := map[string]string{
		"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
		"CI_PROJECT_URL":                      srv.URL + "/group/shop",
		"CI_COMMIT_SHA":                       head,
		"CI_MERGE_REQUEST_IID":                "7",
		"CI_JOB_URL":                          srv.URL + "/group/shop/-/jobs/42",
	}
	env := map[string]string{"CLAIMWARDEN_RELEASES": "file://" + release(t, nil), "CLAIMWARDEN_GIT_TOKEN": gl.token}
	for k, v := range job.Job.Variables {
		if k == "GIT_DEPTH" {
			continue
		}
		env[k] = expand(t, expand(t, v, inputExpr, inputs), variableExpr, predefined)
	}
	code, stdout, stderr := runScript(t, clone, job.Job.Script[0], env)
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (denied)\n--- stdout\n%s--- stderr\n%s", code, stdout, stderr)
	}

	suites, err := junit.IngestFile(filepath.Join(clone, report))
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]string{}
	for _, s := range suites {
		for _, tc := range s.Tests {
			if tc.Status == junit.StatusFailed {
				failed[s.Name+" "+tc.Name] = tc.Message
			}
		}
	}
	if len(failed) != 2 || failed["shop/big claim data-big-0 10Gi → 40Gi"] != "denied by max-step" {
		t.Errorf("failed test cases %v, want shop/big's two claims denied by max-step", failed)
	}

	gl.mu.Lock()
	defer gl.mu.Unlock()
	assertPosted(t, posted{statuses: gl.statuses, contextKey: "name", head: head, targetURL: predefined["CI_JOB_URL"],
		denied: "failed", comments: gl.notes})
}
