package pullrequest_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
)

const githubToken = "ghp_secret0123456789"

func githubProposer(t *testing.T, s *script) pullrequest.Proposer {
	t.Helper()
	// Any host but github.com is GitHub Enterprise: the API under /api/v3.
	p, err := pullrequest.New(githost.Host{URL: s.URL, Type: githost.GitHub, Token: githubToken}, githost.Clients{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func serveGitHub(t *testing.T, want ...exchange) *script {
	return serve(t, "Authorization", "Bearer "+githubToken, want...)
}

const ghRepo = "/api/v3/repos/octo/shop"

// ghCommit are the requests that build the one commit of change("octo")
// on main's head, up to the branch's lookup, which answers branchStatus.
func ghCommit(branchStatus int, branchBody string) []exchange {
	return []exchange{
		{method: "GET", path: ghRepo + "/git/ref/heads/main", status: 200,
			body: `{"ref":"refs/heads/main","object":{"type":"commit","sha":"base1"}}`},
		{method: "GET", path: ghRepo + "/git/commits/base1", status: 200,
			body: `{"sha":"base1","tree":{"sha":"tree1"},"parents":[]}`},
		{method: "POST", path: ghRepo + "/git/trees", status: 201, body: `{"sha":"tree2","tree":[]}`,
			check: jsonFields(map[string]any{"base_tree": "tree1", "tree": []map[string]any{
				{"path": "apps/web.yaml", "mode": "100644", "type": "blob", "content": "storage: 20Gi\n"},
				{"path": "apps/web-pdb.yaml", "mode": "100644", "type": "blob", "content": "kind: PodDisruptionBudget\n"},
			}})},
		{method: "POST", path: ghRepo + "/git/commits", status: 201, body: `{"sha":"commit2"}`,
			check: jsonFields(map[string]any{"message": "web: data 20Gi", "tree": "tree2", "parents": []string{"base1"}})},
		{method: "GET", path: ghRepo + "/git/ref/heads/" + prBranch, status: branchStatus, body: branchBody},
	}
}

const ghOpenQuery = "state=open&head=octo:" + prBranch + "&sort=created&direction=desc&per_page=50"

// ghUser answers GET /user: the token is claimwarden-bot's.
var ghUser = exchange{method: "GET", path: "/api/v3/user", status: 200, body: `{"login":"claimwarden-bot","id":5}`}

// ghPR is a pull request as GitHub lists it, from prBranch: its head
// repository is the base's (1) or a fork (99); login is its author.
func ghPR(number int, state, login string, fork bool, base, extra string) string {
	head := 1
	if fork {
		head = 99
	}
	return fmt.Sprintf(`{"number":%d,"state":%q,"html_url":"https://github.example.com/octo/shop/pull/%d","user":{"login":%q},`+
		`"head":{"ref":%q,"sha":"head%d","repo":{"id":%d}},"base":{"ref":%q,"repo":{"id":1}}%s}`, number, state, number, login, prBranch, number, head, base, extra)
}

// A first proposal: the branch is created at the one new commit, and a
// pull request is created from it. The open ones of that branch's name are
// not claimwarden's (a fork's, though its author's login were the token's;
// another user's to another base), and are not edited.
func TestGitHubOpensPullRequest(t *testing.T) {
	want := append([]exchange{ghUser,
		{method: "GET", path: ghRepo + "/pulls", query: ghOpenQuery, status: 200,
			body: "[" + ghPR(9, "open", "claimwarden-bot", true, "main", "") + "," + ghPR(8, "open", "mallory", false, "release", "") + "]"},
	}, ghCommit(404, `{"message":"Not Found","status":"404"}`)...)
	want = append(want,
		exchange{method: "POST", path: ghRepo + "/git/refs", status: 201, body: `{"ref":"refs/heads/` + prBranch + `","object":{"sha":"commit2"}}`,
			check: jsonFields(map[string]any{"ref": "refs/heads/" + prBranch, "sha": "commit2"})},
		exchange{method: "POST", path: ghRepo + "/pulls", status: 201,
			body:  `{"number":7,"state":"open","html_url":"https://github.example.com/octo/shop/pull/7"}`,
			check: jsonFields(map[string]any{"head": prBranch, "base": "main", "title": "Grow shop/web data to 20Gi", "body": "data-web-0 is 91% full."})},
	)
	s := serveGitHub(t, want...)
	pr, err := githubProposer(t, s).Propose(t.Context(), change("octo"))
	if err != nil || pr.Number != 7 || pr.State != pullrequest.Open || pr.URL != "https://github.example.com/octo/shop/pull/7" || pr.Head != "commit2" {
		t.Fatalf("Propose: %+v, %v; want open pull request 7 at commit2", pr, err)
	}
}

// A later proposal: the branch is forced to the new commit and the open
// pull request edited, not a second one created.
func TestGitHubUpdatesOpenPullRequest(t *testing.T) {
	want := append([]exchange{ghUser,
		{method: "GET", path: ghRepo + "/pulls", query: ghOpenQuery, status: 200,
			body: "[" + ghPR(9, "open", "mallory", true, "main", "") + "," + ghPR(7, "open", "Claimwarden-Bot", false, "main", "") + "]"},
	}, ghCommit(200, `{"ref":"refs/heads/`+prBranch+`","object":{"sha":"old"}}`)...)
	want = append(want,
		exchange{method: "PATCH", path: ghRepo + "/git/refs/heads/" + prBranch, status: 200, body: `{"object":{"sha":"commit2"}}`,
			check: jsonFields(map[string]any{"sha": "commit2", "force": true})},
		exchange{method: "PATCH", path: ghRepo + "/pulls/7", status: 200, body: `{"number":7,"state":"open"}`,
			check: jsonFields(map[string]any{"title": "Grow shop/web data to 20Gi", "body": "data-web-0 is 91% full."})},
	)
	s := serveGitHub(t, want...)
	pr, err := githubProposer(t, s).Propose(t.Context(), change("octo"))
	if err != nil || pr.Number != 7 || pr.State != pullrequest.Open || pr.Head != "commit2" {
		t.Fatalf("Propose: %+v, %v; want pull request 7 updated, at commit2", pr, err)
	}
}

// Another user's open pull request from the repository's own branch of
// that name, to the same base, is neither edited nor duplicated (GitHub
// takes one per head and base): the error names it. Nothing is written,
// its branch least of all (the script fails any request past the search).
func TestGitHubLeavesAnotherUsersPullRequest(t *testing.T) {
	s := serveGitHub(t, ghUser,
		exchange{method: "GET", path: ghRepo + "/pulls", query: ghOpenQuery, status: 200, body: "[" + ghPR(8, "open", "mallory", false, "main", "") + "]"},
	)
	_, err := githubProposer(t, s).Propose(t.Context(), change("octo"))
	noSecret(t, err, githubToken, "https://github.example.com/octo/shop/pull/8", `opened by "mallory"`)
}

// Last is the newest pull request of the branch that claimwarden opened:
// neither a fork's (closed or open) nor another user's counts.
func TestGitHubLast(t *testing.T) {
	merged := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	closed := time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC)
	const closedAt = `,"closed_at":"2026-03-02T11:00:00Z","merged_at":null`
	cases := []struct {
		name, body string
		want       *pullrequest.PullRequest
	}{
		{"none", `[]`, nil},
		{"open", "[" + ghPR(3, "open", "claimwarden-bot", false, "main", `,"closed_at":null,"merged_at":null`) + "]",
			&pullrequest.PullRequest{Number: 3, State: pullrequest.Open, Head: "head3"}},
		{"merged", "[" + ghPR(4, "closed", "claimwarden-bot", false, "main", `,"closed_at":"2026-03-01T10:00:00Z","merged_at":"2026-03-01T10:00:00Z"`) + "]",
			&pullrequest.PullRequest{Number: 4, State: pullrequest.Merged, ClosedAt: merged, Head: "head4"}},
		{"closed", "[" + ghPR(5, "closed", "claimwarden-bot", false, "main", closedAt) + "]",
			&pullrequest.PullRequest{Number: 5, State: pullrequest.Closed, ClosedAt: closed, Head: "head5"}},
		{"a fork's and another user's", "[" + ghPR(7, "closed", "claimwarden-bot", true, "main", closedAt) + "," +
			ghPR(6, "open", "mallory", false, "main", "") + "]", nil},
		{"claimwarden's behind them", "[" + ghPR(7, "closed", "mallory", true, "main", closedAt) + "," +
			ghPR(5, "closed", "claimwarden-bot", false, "main", closedAt) + "]",
			&pullrequest.PullRequest{Number: 5, State: pullrequest.Closed, ClosedAt: closed, Head: "head5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := serveGitHub(t, ghUser, exchange{method: "GET", path: ghRepo + "/pulls", status: 200, body: tc.body,
				query: "state=all&head=octo:" + prBranch + "&sort=created&direction=desc&per_page=50"})
			got, err := githubProposer(t, s).Last(t.Context(), "octo", "shop", prKey)
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && (got.Number != tc.want.Number || got.State != tc.want.State || !got.ClosedAt.Equal(tc.want.ClosedAt) || got.Head != tc.want.Head)) {
				t.Errorf("Last = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The token's identity is read once per host and token, not at every
// check: the proposers built per check share one Identities.
func TestGitHubReadsIdentityOnce(t *testing.T) {
	list := exchange{method: "GET", path: ghRepo + "/pulls", status: 200, body: `[]`,
		query: "state=all&head=octo:" + prBranch + "&sort=created&direction=desc&per_page=50"}
	s := serveGitHub(t, ghUser, list, list)
	ids := &pullrequest.Identities{}
	for range 2 {
		p, err := pullrequest.New(githost.Host{URL: s.URL, Type: githost.GitHub, Token: githubToken}, githost.Clients{}, ids)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := p.Last(t.Context(), "octo", "shop", prKey); err != nil || got != nil {
			t.Fatalf("Last = %+v, %v; want none", got, err)
		}
	}
}

// Files are read raw (the raw media type), bounded; 404 is ErrNotFound.
func TestGitHubFile(t *testing.T) {
	raw := func(t *testing.T, r *http.Request, _ []byte) {
		if a := r.Header.Get("Accept"); a != "application/vnd.github.raw+json" {
			t.Errorf("Accept %q, want the raw media type", a)
		}
	}
	path := ghRepo + "/contents/apps/web.yaml"
	s := serveGitHub(t,
		exchange{method: "GET", path: path, query: "ref=main", check: raw, status: 200, body: "storage: 10Gi\n",
			header: map[string]string{"Content-Type": "application/vnd.github.raw+json"}},
		exchange{method: "GET", path: path, query: "ref=main", status: 404, body: `{"message":"Not Found"}`},
		exchange{method: "GET", path: path, query: "ref=main", status: 200, body: strings.Repeat("x", pullrequest.MaxFileBytes+1),
			header: map[string]string{"Content-Type": "application/vnd.github.raw+json"}},
	)
	p := githubProposer(t, s)
	if got, err := p.File(t.Context(), "octo", "shop", "main", "apps/web.yaml"); err != nil || string(got) != "storage: 10Gi\n" {
		t.Errorf("File: %q, %v", got, err)
	}
	if _, err := p.File(t.Context(), "octo", "shop", "main", "apps/web.yaml"); !errors.Is(err, pullrequest.ErrNotFound) {
		t.Errorf("404: %v, want ErrNotFound", err)
	}
	if _, err := p.File(t.Context(), "octo", "shop", "main", "apps/web.yaml"); !errors.Is(err, pullrequest.ErrTooLarge) {
		t.Errorf("over MaxFileBytes: %v, want ErrTooLarge", err)
	}
}

// Files lists the recursive tree and keeps the blobs under dir, sorted; a
// truncated tree is too large to list.
func TestGitHubFiles(t *testing.T) {
	tree := `{"sha":"t","truncated":false,"tree":[
		{"path":"apps","type":"tree"},{"path":"apps/web.yaml","type":"blob"},{"path":"appsx/other.yaml","type":"blob"},
		{"path":"apps/db","type":"tree"},{"path":"apps/db/kustomization.yaml","type":"blob"},{"path":"README.md","type":"blob"}]}`
	s := serveGitHub(t,
		exchange{method: "GET", path: ghRepo + "/git/trees/main", query: "recursive=1", status: 200, body: tree},
		exchange{method: "GET", path: ghRepo + "/git/trees/main", query: "recursive=1", status: 200, body: `{"sha":"t","truncated":true,"tree":[]}`},
	)
	p := githubProposer(t, s)
	files, err := p.Files(t.Context(), "octo", "shop", "main", "./apps/")
	if err != nil || strings.Join(files, ",") != "apps/db/kustomization.yaml,apps/web.yaml" {
		t.Errorf("Files: %q, %v; want the two under apps/, sorted", files, err)
	}
	if _, err := p.Files(t.Context(), "octo", "shop", "main", "apps"); !errors.Is(err, pullrequest.ErrTooLarge) {
		t.Errorf("truncated tree: %v, want ErrTooLarge", err)
	}
}

// A refusal names the host, method and path, and never the token, even
// when the host echoes it.
func TestGitHubErrorNamesRequestNotToken(t *testing.T) {
	s := serveGitHub(t, ghUser, exchange{method: "GET", path: ghRepo + "/pulls", query: ghOpenQuery, status: 200, body: "[]"},
		exchange{method: "GET", path: ghRepo + "/git/ref/heads/main", status: 403,
			body: `{"message":"Resource not accessible by token ` + githubToken + `"}`})
	_, err := githubProposer(t, s).Propose(t.Context(), change("octo"))
	noSecret(t, err, githubToken, "github: GET repos/octo/shop/git/ref/heads/main", "403")
}

// A GitHub App installation needs no token.
func TestNewTakesGitHubApp(t *testing.T) {
	app := &githost.GitHubApp{AppID: 1, InstallationID: 2, PrivateKey: testKey(t)}
	if _, err := pullrequest.New(githost.Host{URL: "https://github.com", Type: githost.GitHub, GitHubApp: app}, githost.Clients{}, nil); err != nil {
		t.Errorf("GitHub App: %v", err)
	}
	if _, err := pullrequest.New(githost.Host{URL: "https://gitlab.com", Type: githost.GitLab}, githost.Clients{}, nil); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("GitLab without a token: %v, want refused", err)
	}
}

func TestGitHubDefaultBranch(t *testing.T) {
	s := serveGitHub(t,
		exchange{method: "GET", path: ghRepo, status: 200, body: `{"name":"shop","default_branch":"trunk"}`},
		exchange{method: "GET", path: ghRepo, status: 200, body: `{"name":"shop"}`},
		exchange{method: "GET", path: ghRepo, status: 404, body: `{"message":"Not Found for ` + githubToken + `"}`},
	)
	p := githubProposer(t, s)
	if got, err := p.DefaultBranch(t.Context(), "octo", "shop"); err != nil || got != "trunk" {
		t.Errorf("DefaultBranch: %q, %v; want trunk", got, err)
	}
	_, err := p.DefaultBranch(t.Context(), "octo", "shop")
	noSecret(t, err, githubToken, "github: GET repos/octo/shop", "no default branch")
	_, err = p.DefaultBranch(t.Context(), "octo", "shop")
	noSecret(t, err, githubToken, "github: GET repos/octo/shop", "404")
}

// With a GitHub App, claimwarden's pull requests are its bot user's,
// "<slug>[bot]": the slug is read as the App (GET /app, with its JWT),
// which the installation may not read; the pull requests as the
// installation.
func TestGitHubAppIsItsBotUser(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+strings.SplitN(r.Header.Get("Authorization"), ".", 2)[0])
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "GET /api/v3/app":
			_, _ = io.WriteString(w, `{"id":1,"slug":"claimwarden"}`)
		case "POST /api/v3/app/installations/2/access_tokens":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"token":"ghs_installation","expires_at":"2099-01-01T00:00:00Z"}`)
		case "GET " + ghRepo + "/pulls":
			_, _ = io.WriteString(w, "["+ghPR(6, "open", "mallory", false, "main", "")+","+ghPR(5, "open", "claimwarden[bot]", false, "main", "")+"]")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	p, err := pullrequest.New(githost.Host{URL: srv.URL, Type: githost.GitHub,
		GitHubApp: &githost.GitHubApp{AppID: 1, InstallationID: 2, PrivateKey: testKey(t)}}, githost.Clients{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	last, err := p.Last(t.Context(), "octo", "shop", prKey)
	if err != nil || last == nil || last.Number != 5 {
		t.Fatalf("Last = %+v, %v; want 5, the bot user's", last, err)
	}
	// A JWT is cut at its first dot: its header, {"alg":"RS256","typ":"JWT"}.
	const jwt = "Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9"
	want := []string{"GET /api/v3/app " + jwt, "POST /api/v3/app/installations/2/access_tokens " + jwt, "GET " + ghRepo + "/pulls token ghs_installation"}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Open lists the repository's open pull requests once for every key:
// claimwarden's own from the repository's branches under the prefix, by
// key; a fork's, another user's, and one under another prefix are not
// among them. More pages than are read is ErrTooManyOpen.
func TestGitHubOpen(t *testing.T) {
	const query = "state=open&sort=created&direction=desc&per_page=100"
	open := `,"closed_at":null,"merged_at":null`
	other := strings.ReplaceAll(ghPR(9, "open", "claimwarden-bot", false, "main", open), prBranch, "claimwarden/other/web")
	body := "[" + ghPR(8, "open", "claimwarden-bot", true, "main", open) + "," + ghPR(7, "open", "mallory", false, "main", open) + "," +
		other + "," + ghPR(3, "open", "claimwarden-bot", false, "main", open) + "]"
	s := serveGitHub(t, ghUser, exchange{method: "GET", path: ghRepo + "/pulls", query: query, status: 200, body: body})
	got, err := githubProposer(t, s).(pullrequest.OpenLister).Open(t.Context(), "octo", "shop", "autoresize/")
	if err != nil {
		t.Fatal(err)
	}
	if pr, ok := got[prKey]; len(got) != 1 || !ok || pr.Number != 3 || pr.State != pullrequest.Open || pr.Head != "head3" {
		t.Errorf("Open = %+v, want only %s's pull request 3", got, prKey)
	}

	var pages []exchange
	for page := range 5 {
		q := query
		if page > 0 {
			q += fmt.Sprintf("&page=%d", page+1)
		}
		pages = append(pages, exchange{method: "GET", path: ghRepo + "/pulls", query: q, status: 200, body: `[]`,
			header: map[string]string{"Link": fmt.Sprintf(`<%s%s/pulls?page=%d>; rel="next"`, s.URL, ghRepo, page+2)}})
	}
	s = serveGitHub(t, append([]exchange{ghUser}, pages...)...)
	if got, err := githubProposer(t, s).(pullrequest.OpenLister).Open(t.Context(), "octo", "shop", "autoresize/"); !errors.Is(err, pullrequest.ErrTooManyOpen) {
		t.Errorf("Open of more than 5 pages = %v, %v; want ErrTooManyOpen", got, err)
	}
}
