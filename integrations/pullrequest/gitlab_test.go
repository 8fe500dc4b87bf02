package pullrequest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
)

const gitlabToken = "glpat-secret0123456789"

// The project group/sub/shop (a subgroup) is addressed by its escaped
// full path, "." escaped too as client-go does.
const glProject = "/api/v4/projects/group%2Fsub%2Fshop"

func gitlabProposer(t *testing.T, s *script) pullrequest.Proposer {
	t.Helper()
	p, err := pullrequest.New(githost.Host{URL: s.URL, Type: githost.GitLab, Token: gitlabToken}, githost.Clients{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func serveGitLab(t *testing.T, want ...exchange) *script {
	return serve(t, "PRIVATE-TOKEN", gitlabToken, want...)
}

// glCommit are the requests that make the one commit of change("group/sub"):
// web.yaml is on main (update), web-pdb.yaml is not (create); the branch
// starts from main and is forced.
func glCommit() []exchange {
	return []exchange{
		{method: "HEAD", path: glProject + "/repository/files/apps%2Fweb%2Eyaml", query: "ref=main", status: 200,
			header: map[string]string{"X-Gitlab-File-Path": "apps/web.yaml", "X-Gitlab-Size": "14", "X-Gitlab-Blob-Id": "b1"}},
		{method: "HEAD", path: glProject + "/repository/files/apps%2Fweb-pdb%2Eyaml", query: "ref=main", status: 404},
		{method: "POST", path: glProject + "/repository/commits", status: 201, body: `{"id":"c2","short_id":"c2"}`,
			check: jsonFields(map[string]any{
				"branch": prBranch, "start_branch": "main", "force": true, "commit_message": "web: data 20Gi",
				"actions": []map[string]any{
					{"action": "update", "file_path": "apps/web.yaml", "content": "storage: 20Gi\n"},
					{"action": "create", "file_path": "apps/web-pdb.yaml", "content": "kind: PodDisruptionBudget\n"},
				},
			})},
	}
}

const glOpenQuery = "source_branch=" + prBranch + "&state=opened&order_by=created_at&sort=desc&per_page=50"

// glUser answers GET /user: the token is user 5's.
var glUser = exchange{method: "GET", path: "/api/v4/user", status: 200, body: `{"id":5,"username":"claimwarden-bot"}`}

// glMR is a merge request as GitLab lists it, from prBranch: its source
// project is the target (1) or a fork (99); author is its author's ID.
func glMR(iid int, state string, author int, fork bool, target, extra string) string {
	source := 1
	if fork {
		source = 99
	}
	return fmt.Sprintf(`{"iid":%d,"state":%q,"web_url":"https://gitlab.example.com/group/sub/shop/-/merge_requests/%d","author":{"id":%d,"username":"user%d"},`+
		`"source_branch":%q,"source_project_id":%d,"target_project_id":1,"target_branch":%q,"sha":"head%d"%s}`, iid, state, iid, author, author, prBranch, source, target, iid, extra)
}

// A first proposal: a merge request is created; the open ones of that
// branch's name are not claimwarden's (a fork's, though its author were
// the token's user; another user's to another target), and are not edited.
func TestGitLabOpensMergeRequest(t *testing.T) {
	want := append([]exchange{glUser,
		{method: "GET", path: glProject + "/merge_requests", query: glOpenQuery, status: 200,
			body: "[" + glMR(9, "opened", 5, true, "main", "") + "," + glMR(8, "opened", 6, false, "release", "") + "]"},
	}, glCommit()...)
	want = append(want,
		exchange{method: "POST", path: glProject + "/merge_requests", status: 201,
			body: `{"id":90,"iid":3,"state":"opened","web_url":"https://gitlab.example.com/group/sub/shop/-/merge_requests/3"}`,
			check: jsonFields(map[string]any{"source_branch": prBranch, "target_branch": "main",
				"title": "Grow shop/web data to 20Gi", "description": "data-web-0 is 91% full."})},
	)
	s := serveGitLab(t, want...)
	pr, err := gitlabProposer(t, s).Propose(t.Context(), change("group/sub"))
	if err != nil || pr.Number != 3 || pr.State != pullrequest.Open || pr.URL != "https://gitlab.example.com/group/sub/shop/-/merge_requests/3" || pr.Head != "c2" {
		t.Fatalf("Propose: %+v, %v; want open merge request 3 at c2", pr, err)
	}
}

func TestGitLabUpdatesOpenMergeRequest(t *testing.T) {
	want := append([]exchange{glUser,
		{method: "GET", path: glProject + "/merge_requests", query: glOpenQuery, status: 200,
			body: "[" + glMR(9, "opened", 6, true, "main", "") + "," + glMR(3, "opened", 5, false, "main", "") + "]"},
	}, glCommit()...)
	want = append(want,
		exchange{method: "PUT", path: glProject + "/merge_requests/3", status: 200, body: `{"id":90,"iid":3,"state":"opened"}`,
			check: jsonFields(map[string]any{"title": "Grow shop/web data to 20Gi", "description": "data-web-0 is 91% full."})},
	)
	s := serveGitLab(t, want...)
	pr, err := gitlabProposer(t, s).Propose(t.Context(), change("group/sub"))
	if err != nil || pr.Number != 3 || pr.State != pullrequest.Open || pr.Head != "c2" {
		t.Fatalf("Propose: %+v, %v; want merge request 3 updated, at c2", pr, err)
	}
}

// Another user's open merge request from the project's own branch of that
// name, to the same target, is neither edited nor duplicated (GitLab takes
// one per source branch): the error names it. Nothing is written, its
// branch least of all (the script fails any request past the search).
func TestGitLabLeavesAnotherUsersMergeRequest(t *testing.T) {
	s := serveGitLab(t, glUser,
		exchange{method: "GET", path: glProject + "/merge_requests", query: glOpenQuery, status: 200, body: "[" + glMR(8, "opened", 6, false, "main", "") + "]"},
	)
	_, err := gitlabProposer(t, s).Propose(t.Context(), change("group/sub"))
	noSecret(t, err, gitlabToken, "https://gitlab.example.com/group/sub/shop/-/merge_requests/8", `opened by "user6"`)
}

// Last is the newest merge request of the branch that claimwarden opened:
// neither a fork's (closed or open) nor another user's counts.
func TestGitLabLast(t *testing.T) {
	closedAt := `,"merged_at":null,"closed_at":"2026-03-02T11:00:00.000Z"`
	closed := &pullrequest.PullRequest{Number: 5, State: pullrequest.Closed, ClosedAt: time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC), Head: "head5"}
	cases := []struct {
		name, body string
		want       *pullrequest.PullRequest
	}{
		{"none", `[]`, nil},
		{"open", "[" + glMR(3, "opened", 5, false, "main", `,"merged_at":null,"closed_at":null`) + "]", &pullrequest.PullRequest{Number: 3, State: pullrequest.Open, Head: "head3"}},
		{"merged", "[" + glMR(4, "merged", 5, false, "main", `,"merged_at":"2026-03-01T10:00:00.000Z","closed_at":null`) + "]",
			&pullrequest.PullRequest{Number: 4, State: pullrequest.Merged, ClosedAt: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), Head: "head4"}},
		{"closed", "[" + glMR(5, "closed", 5, false, "main", closedAt) + "]", closed},
		{"a fork's and another user's", "[" + glMR(7, "closed", 5, true, "main", closedAt) + "," + glMR(6, "opened", 6, false, "main", "") + "]", nil},
		{"claimwarden's behind them", "[" + glMR(7, "closed", 6, true, "main", closedAt) + "," + glMR(5, "closed", 5, false, "main", closedAt) + "]", closed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// No state: GitLab lists merge requests in every state.
			s := serveGitLab(t, glUser, exchange{method: "GET", path: glProject + "/merge_requests", status: 200, body: tc.body,
				query: "source_branch=" + prBranch + "&order_by=created_at&sort=desc&per_page=50"})
			got, err := gitlabProposer(t, s).Last(t.Context(), "group/sub", "shop", prKey)
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && (got.Number != tc.want.Number || got.State != tc.want.State || !got.ClosedAt.Equal(tc.want.ClosedAt) || got.Head != tc.want.Head)) {
				t.Errorf("Last = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestGitLabFile(t *testing.T) {
	path := glProject + "/repository/files/apps%2Fweb%2Eyaml/raw"
	plain := map[string]string{"Content-Type": "text/plain"}
	s := serveGitLab(t,
		exchange{method: "GET", path: path, query: "ref=main", status: 200, body: "storage: 10Gi\n", header: plain},
		exchange{method: "GET", path: path, query: "ref=main", status: 404, body: `{"message":"404 File Not Found"}`},
		exchange{method: "GET", path: path, query: "ref=main", status: 200, body: strings.Repeat("x", pullrequest.MaxFileBytes+1), header: plain},
	)
	p := gitlabProposer(t, s)
	if got, err := p.File(t.Context(), "group/sub", "shop", "main", "apps/web.yaml"); err != nil || string(got) != "storage: 10Gi\n" {
		t.Errorf("File: %q, %v", got, err)
	}
	if _, err := p.File(t.Context(), "group/sub", "shop", "main", "apps/web.yaml"); !errors.Is(err, pullrequest.ErrNotFound) {
		t.Errorf("404: %v, want ErrNotFound", err)
	}
	if _, err := p.File(t.Context(), "group/sub", "shop", "main", "apps/web.yaml"); !errors.Is(err, pullrequest.ErrTooLarge) {
		t.Errorf("over MaxFileBytes: %v, want ErrTooLarge", err)
	}
}

// Files lists the tree under dir recursively, page after page (X-Next-Page),
// and keeps the blobs, sorted.
func TestGitLabFiles(t *testing.T) {
	q := "path=apps&recursive=true&ref=main&per_page=100&page="
	s := serveGitLab(t,
		exchange{method: "GET", path: glProject + "/repository/tree", query: q + "1", status: 200,
			header: map[string]string{"X-Next-Page": "2", "X-Page": "1"},
			body:   `[{"id":"a","name":"web.yaml","type":"blob","path":"apps/web.yaml","mode":"100644"},{"id":"b","name":"db","type":"tree","path":"apps/db","mode":"040000"}]`},
		exchange{method: "GET", path: glProject + "/repository/tree", query: q + "2", status: 200,
			header: map[string]string{"X-Next-Page": "", "X-Page": "2"},
			body:   `[{"id":"c","name":"kustomization.yaml","type":"blob","path":"apps/db/kustomization.yaml","mode":"100644"}]`},
		exchange{method: "GET", path: glProject + "/repository/tree", query: "path=none&recursive=true&ref=main&per_page=100&page=1", status: 404,
			body: `{"message":"404 Tree Not Found"}`},
	)
	p := gitlabProposer(t, s)
	files, err := p.Files(t.Context(), "group/sub", "shop", "main", "./apps/")
	if err != nil || strings.Join(files, ",") != "apps/db/kustomization.yaml,apps/web.yaml" {
		t.Errorf("Files: %q, %v; want the two under apps/, sorted", files, err)
	}
	if _, err := p.Files(t.Context(), "group/sub", "shop", "main", "none"); !errors.Is(err, pullrequest.ErrNotFound) {
		t.Errorf("a directory GitLab does not have: %v, want ErrNotFound", err)
	}
}

func TestGitLabErrorNamesRequestNotToken(t *testing.T) {
	commit := glCommit()
	commit[2].status, commit[2].body = 403, `{"message":"403 Forbidden - token `+gitlabToken+` may not push"}`
	want := append([]exchange{glUser, {method: "GET", path: glProject + "/merge_requests", query: glOpenQuery, status: 200, body: "[]"}}, commit...)
	s := serveGitLab(t, want...)
	_, err := gitlabProposer(t, s).Propose(t.Context(), change("group/sub"))
	noSecret(t, err, gitlabToken, "gitlab: POST projects/group%2Fsub%2Fshop/repository/commits", "403")
}

func TestGitLabDefaultBranch(t *testing.T) {
	s := serveGitLab(t,
		exchange{method: "GET", path: glProject, status: 200, body: `{"id":12,"path_with_namespace":"group/sub/shop","default_branch":"trunk"}`},
		exchange{method: "GET", path: glProject, status: 200, body: `{"id":12,"path_with_namespace":"group/sub/shop","default_branch":""}`},
		exchange{method: "GET", path: glProject, status: 404, body: `{"message":"404 Project Not Found for ` + gitlabToken + `"}`},
	)
	p := gitlabProposer(t, s)
	if got, err := p.DefaultBranch(t.Context(), "group/sub", "shop"); err != nil || got != "trunk" {
		t.Errorf("DefaultBranch: %q, %v; want trunk", got, err)
	}
	_, err := p.DefaultBranch(t.Context(), "group/sub", "shop")
	noSecret(t, err, gitlabToken, "gitlab: GET projects/group%2Fsub%2Fshop", "no default branch")
	_, err = p.DefaultBranch(t.Context(), "group/sub", "shop")
	noSecret(t, err, gitlabToken, "gitlab: GET projects/group%2Fsub%2Fshop", "404")
}

// Open lists the project's open merge requests once for every key:
// claimwarden's own from the project's branches under the prefix, by key.
func TestGitLabOpen(t *testing.T) {
	open := `,"merged_at":null,"closed_at":null`
	other := strings.ReplaceAll(glMR(9, "opened", 5, false, "main", open), prBranch, "claimwarden/other/web")
	body := "[" + glMR(8, "opened", 5, true, "main", open) + "," + glMR(7, "opened", 6, false, "main", open) + "," +
		other + "," + glMR(3, "opened", 5, false, "main", open) + "]"
	s := serveGitLab(t, glUser, exchange{method: "GET", path: glProject + "/merge_requests", status: 200, body: body,
		query: "state=opened&order_by=created_at&sort=desc&per_page=100&page=1"})
	got, err := gitlabProposer(t, s).(pullrequest.OpenLister).Open(t.Context(), "group/sub", "shop", "autoresize/")
	if err != nil {
		t.Fatal(err)
	}
	if pr, ok := got[prKey]; len(got) != 1 || !ok || pr.Number != 3 || pr.State != pullrequest.Open || pr.Head != "head3" {
		t.Errorf("Open = %+v, want only %s's merge request 3", got, prKey)
	}
}
