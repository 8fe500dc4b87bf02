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

const (
	bbsToken = "bbs-secret0123456789"
	bbsRepo  = "/rest/api/1.0/projects/SHOP/repos/shop"
	bbsUtils = "/rest/branch-utils/1.0/projects/SHOP/repos/shop/branches"
)

func bbsProposer(t *testing.T, s *script) pullrequest.Proposer {
	t.Helper()
	p, err := pullrequest.New(githost.Host{URL: s.URL, Type: githost.BitbucketServer, Token: bbsToken}, githost.Clients{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func serveBBS(t *testing.T, want ...exchange) *script {
	return serve(t, "Authorization", "Bearer "+bbsToken, want...)
}

// bbsCommits: main's head; the branch deleted (deleteStatus: 204, or 404
// when there is none) and made at it; one commit per file, web.yaml (on
// main) with sourceCommitId, web-pdb.yaml (new) without.
func bbsCommits(deleteStatus int) []exchange {
	return []exchange{
		{method: "GET", path: bbsRepo + "/commits", query: "until=refs/heads/main&limit=1", status: 200, body: `{"values":[{"id":"base1"}],"isLastPage":false}`},
		{method: "DELETE", path: bbsUtils, status: deleteStatus, check: jsonFields(map[string]any{"name": "refs/heads/" + prBranch, "dryRun": false})},
		{method: "POST", path: bbsUtils, status: 200, body: `{"id":"refs/heads/` + prBranch + `","latestCommit":"base1"}`,
			check: jsonFields(map[string]any{"name": prBranch, "startPoint": "base1"})},
		{method: "GET", path: bbsRepo + "/browse/apps/web.yaml", query: "at=base1&type=true", status: 200, body: `{"type":"FILE"}`},
		{method: "PUT", path: bbsRepo + "/browse/apps/web.yaml", status: 200, body: `{"id":"c1"}`,
			check: formFields(map[string]string{"content": "storage: 20Gi\n", "message": "web: data 20Gi", "branch": prBranch, "sourceCommitId": "base1"})},
		{method: "GET", path: bbsRepo + "/browse/apps/web-pdb.yaml", query: "at=base1&type=true", status: 404, body: `{"errors":[{"message":"The path \"apps/web-pdb.yaml\" does not exist at revision \"base1\""}]}`},
		{method: "PUT", path: bbsRepo + "/browse/apps/web-pdb.yaml", status: 200, body: `{"id":"c2"}`,
			check: formFields(map[string]string{"content": "kind: PodDisruptionBudget\n", "message": "web: data 20Gi", "branch": prBranch})},
	}
}

const bbsOpenQuery = "at=refs/heads/" + prBranch + "&state=OPEN&direction=OUTGOING&order=NEWEST&limit=50"

// bbsUser answers the user name of the token: claimwarden-bot (in its
// X-AUSERNAME, as every authenticated answer, and its body).
var bbsUser = exchange{method: "GET", path: "/plugins/servlet/applinks/whoami", status: 200, body: "claimwarden-bot",
	header: map[string]string{"Content-Type": "text/plain", "X-AUSERNAME": "claimwarden-bot"}}

// Without X-AUSERNAME, the user name is whoami's body.
func TestBitbucketServerIdentityFromWhoami(t *testing.T) {
	s := serveBBS(t, exchange{method: "GET", path: "/plugins/servlet/applinks/whoami", status: 200, body: "claimwarden-bot\n",
		header: map[string]string{"Content-Type": "text/plain"}},
		exchange{method: "GET", path: bbsRepo + "/pull-requests", status: 200, body: `{"values":[` + bbsPR(5, "OPEN", "claimwarden-bot", false, "main", "") + `]}`,
			query: "at=refs/heads/" + prBranch + "&state=ALL&direction=OUTGOING&order=NEWEST&limit=50"})
	if got, err := bbsProposer(t, s).Last(t.Context(), "SHOP", "shop", prKey); err != nil || got == nil || got.Number != 5 {
		t.Errorf("Last = %+v, %v; want 5", got, err)
	}
}

// bbsPR is a pull request as Bitbucket Server lists it, from prBranch: its
// fromRef's repository is the toRef's (1) or a fork (99); author is its
// author's user name.
func bbsPR(id int, state, author string, fork bool, to, extra string) string {
	from := 1
	if fork {
		from = 99
	}
	return fmt.Sprintf(`{"id":%d,"version":3,"state":%q,"author":{"user":{"name":%q}},"links":{"self":[{"href":"https://git.example.com/projects/SHOP/repos/shop/pull-requests/%d"}]},`+
		`"fromRef":{"displayId":%q,"latestCommit":"head%d","repository":{"id":%d}},"toRef":{"displayId":%q,"repository":{"id":1}}%s}`,
		id, state, author, id, prBranch, id, from, to, extra)
}

// The open pull requests are searched before the branch is written and
// again after (the branch's deletion may have declined claimwarden's).
func TestBitbucketServerOpensPullRequest(t *testing.T) {
	open := exchange{method: "GET", path: bbsRepo + "/pull-requests", query: bbsOpenQuery, status: 200,
		body: `{"values":[` + bbsPR(9, "OPEN", "claimwarden-bot", true, "main", "") + "," + bbsPR(7, "OPEN", "mallory", false, "release", "") + `],"isLastPage":true}`}
	want := append([]exchange{bbsUser, open}, bbsCommits(404)...)
	want = append(want, open,
		exchange{method: "POST", path: bbsRepo + "/pull-requests", status: 201,
			body: `{"id":8,"version":0,"state":"OPEN","links":{"self":[{"href":"https://git.example.com/projects/SHOP/repos/shop/pull-requests/8"}]}}`,
			check: jsonFields(map[string]any{"title": "Grow shop/web data to 20Gi", "description": "data-web-0 is 91% full.",
				"fromRef": map[string]any{"id": "refs/heads/" + prBranch}, "toRef": map[string]any{"id": "refs/heads/main"}})},
	)
	pr, err := bbsProposer(t, serveBBS(t, want...)).Propose(t.Context(), change("SHOP"))
	if err != nil || pr.Number != 8 || pr.State != pullrequest.Open || pr.URL != "https://git.example.com/projects/SHOP/repos/shop/pull-requests/8" || pr.Head != "c2" {
		t.Fatalf("Propose: %+v, %v; want open pull request 8 at c2", pr, err)
	}
}

// The open pull request is updated with the version Bitbucket requires.
func TestBitbucketServerUpdatesOpenPullRequest(t *testing.T) {
	open := exchange{method: "GET", path: bbsRepo + "/pull-requests", query: bbsOpenQuery, status: 200,
		body: `{"values":[` + bbsPR(9, "OPEN", "mallory", true, "main", "") + "," + bbsPR(8, "OPEN", "Claimwarden-Bot", false, "main", "") + `]}`}
	want := append([]exchange{bbsUser, open}, bbsCommits(204)...)
	want = append(want, open,
		exchange{method: "PUT", path: bbsRepo + "/pull-requests/8", status: 200, body: `{"id":8,"version":4,"state":"OPEN"}`,
			check: jsonFields(map[string]any{"title": "Grow shop/web data to 20Gi", "description": "data-web-0 is 91% full.", "version": 3})},
	)
	pr, err := bbsProposer(t, serveBBS(t, want...)).Propose(t.Context(), change("SHOP"))
	if err != nil || pr.Number != 8 || pr.State != pullrequest.Open || pr.Head != "c2" {
		t.Fatalf("Propose: %+v, %v; want pull request 8 updated, at c2", pr, err)
	}
}

// Deleting the branch declined claimwarden's open pull request: the search
// after the rebuild finds none open, and a new one is created.
func TestBitbucketServerOpensAnewWhenTheDeletionDeclined(t *testing.T) {
	want := append([]exchange{bbsUser, {method: "GET", path: bbsRepo + "/pull-requests", query: bbsOpenQuery, status: 200,
		body: `{"values":[` + bbsPR(8, "OPEN", "claimwarden-bot", false, "main", "") + `]}`}}, bbsCommits(204)...)
	want = append(want,
		exchange{method: "GET", path: bbsRepo + "/pull-requests", query: bbsOpenQuery, status: 200, body: `{"values":[]}`},
		exchange{method: "POST", path: bbsRepo + "/pull-requests", status: 201, body: `{"id":10,"version":0,"state":"OPEN"}`,
			check: jsonFields(map[string]any{"fromRef": map[string]any{"id": "refs/heads/" + prBranch}, "toRef": map[string]any{"id": "refs/heads/main"}})},
	)
	pr, err := bbsProposer(t, serveBBS(t, want...)).Propose(t.Context(), change("SHOP"))
	if err != nil || pr.Number != 10 || pr.Head != "c2" {
		t.Fatalf("Propose: %+v, %v; want a new pull request 10 at c2", pr, err)
	}
}

// Another user's open pull request from the repository's own branch of
// that name, to the same branch, is neither edited nor duplicated
// (Bitbucket takes one per source and target): the error names it.
// Nothing is written: its branch is neither deleted nor committed to (the
// script fails any request past the search).
func TestBitbucketServerLeavesAnotherUsersPullRequest(t *testing.T) {
	s := serveBBS(t, bbsUser,
		exchange{method: "GET", path: bbsRepo + "/pull-requests", query: bbsOpenQuery, status: 200, body: `{"values":[` + bbsPR(7, "OPEN", "mallory", false, "main", "") + `]}`},
	)
	_, err := bbsProposer(t, s).Propose(t.Context(), change("SHOP"))
	noSecret(t, err, bbsToken, "https://git.example.com/projects/SHOP/repos/shop/pull-requests/7", `opened by "mallory"`)
}

// Last is the newest pull request of the branch that claimwarden opened:
// another user's does not count, nor a fork's (which direction OUTGOING
// does not list, and which is checked still).
func TestBitbucketServerLast(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ms := `,"closedDate":1772359200000` // at, in milliseconds
	declined := &pullrequest.PullRequest{Number: 5, State: pullrequest.Closed, ClosedAt: at, Head: "head5"}
	cases := []struct {
		name, body string
		want       *pullrequest.PullRequest
	}{
		{"none", `{"values":[]}`, nil},
		{"open", `{"values":[` + bbsPR(3, "OPEN", "claimwarden-bot", false, "main", "") + `]}`, &pullrequest.PullRequest{Number: 3, State: pullrequest.Open, Head: "head3"}},
		{"merged", `{"values":[` + bbsPR(4, "MERGED", "claimwarden-bot", false, "main", ms) + `]}`, &pullrequest.PullRequest{Number: 4, State: pullrequest.Merged, ClosedAt: at, Head: "head4"}},
		{"declined", `{"values":[` + bbsPR(5, "DECLINED", "claimwarden-bot", false, "main", ms) + `]}`, declined},
		{"a fork's and another user's", `{"values":[` + bbsPR(7, "DECLINED", "claimwarden-bot", true, "main", ms) + "," + bbsPR(6, "OPEN", "mallory", false, "main", "") + `]}`, nil},
		{"claimwarden's behind them", `{"values":[` + bbsPR(7, "DECLINED", "mallory", false, "main", ms) + "," + bbsPR(5, "DECLINED", "claimwarden-bot", false, "main", ms) + `]}`, declined},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := serveBBS(t, bbsUser, exchange{method: "GET", path: bbsRepo + "/pull-requests", status: 200, body: tc.body,
				query: "at=refs/heads/" + prBranch + "&state=ALL&direction=OUTGOING&order=NEWEST&limit=50"})
			got, err := bbsProposer(t, s).Last(t.Context(), "SHOP", "shop", prKey)
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && (got.Number != tc.want.Number || got.State != tc.want.State || !got.ClosedAt.Equal(tc.want.ClosedAt) || got.Head != tc.want.Head)) {
				t.Errorf("Last = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBitbucketServerFile(t *testing.T) {
	path := bbsRepo + "/raw/apps/web.yaml"
	plain := map[string]string{"Content-Type": "text/plain"}
	s := serveBBS(t,
		exchange{method: "GET", path: path, query: "at=main", status: 200, body: "storage: 10Gi\n", header: plain},
		exchange{method: "GET", path: path, query: "at=main", status: 404, body: `{"errors":[{"message":"The path \"apps/web.yaml\" does not exist at revision \"main\""}]}`},
		exchange{method: "GET", path: path, query: "at=main", status: 200, body: strings.Repeat("x", pullrequest.MaxFileBytes+1), header: plain},
	)
	p := bbsProposer(t, s)
	if got, err := p.File(t.Context(), "SHOP", "shop", "main", "apps/web.yaml"); err != nil || string(got) != "storage: 10Gi\n" {
		t.Errorf("File: %q, %v", got, err)
	}
	if _, err := p.File(t.Context(), "SHOP", "shop", "main", "apps/web.yaml"); !errors.Is(err, pullrequest.ErrNotFound) {
		t.Errorf("404: %v, want ErrNotFound", err)
	}
	if _, err := p.File(t.Context(), "SHOP", "shop", "main", "apps/web.yaml"); !errors.Is(err, pullrequest.ErrTooLarge) {
		t.Errorf("over MaxFileBytes: %v, want ErrTooLarge", err)
	}
}

// The files API answers paths relative to the directory, page by page.
func TestBitbucketServerFiles(t *testing.T) {
	s := serveBBS(t,
		exchange{method: "GET", path: bbsRepo + "/files/apps", query: "at=main&start=0&limit=1000", status: 200,
			body: `{"values":["web.yaml"],"isLastPage":false,"nextPageStart":1}`},
		exchange{method: "GET", path: bbsRepo + "/files/apps", query: "at=main&start=1&limit=1000", status: 200,
			body: `{"values":["db/kustomization.yaml"],"isLastPage":true}`},
	)
	files, err := bbsProposer(t, s).Files(t.Context(), "SHOP", "shop", "main", "./apps/")
	if err != nil || strings.Join(files, ",") != "apps/db/kustomization.yaml,apps/web.yaml" {
		t.Errorf("Files: %q, %v; want the two under apps/, sorted", files, err)
	}
}

func TestBitbucketServerErrorNamesRequestNotToken(t *testing.T) {
	s := serveBBS(t, bbsUser, exchange{method: "GET", path: bbsRepo + "/pull-requests", query: bbsOpenQuery, status: 200, body: `{"values":[]}`},
		exchange{method: "GET", path: bbsRepo + "/commits", query: "until=refs/heads/main&limit=1", status: 401,
			body: `{"errors":[{"message":"Token ` + bbsToken + ` is not valid"}]}`})
	_, err := bbsProposer(t, s).Propose(t.Context(), change("SHOP"))
	noSecret(t, err, bbsToken, "bitbucket-server: GET /rest/api/1.0/projects/SHOP/repos/shop/commits", "401")
}

func TestBitbucketServerDefaultBranch(t *testing.T) {
	path := bbsRepo + "/default-branch"
	s := serveBBS(t,
		exchange{method: "GET", path: path, status: 200, body: `{"id":"refs/heads/trunk","displayId":"trunk","type":"BRANCH","isDefault":true}`},
		exchange{method: "GET", path: path, status: 200, body: `{}`},
		exchange{method: "GET", path: path, status: 404, body: `{"errors":[{"message":"Repository SHOP/shop has no default branch (` + bbsToken + `)"}]}`},
	)
	p := bbsProposer(t, s)
	if got, err := p.DefaultBranch(t.Context(), "SHOP", "shop"); err != nil || got != "trunk" {
		t.Errorf("DefaultBranch: %q, %v; want trunk", got, err)
	}
	_, err := p.DefaultBranch(t.Context(), "SHOP", "shop")
	noSecret(t, err, bbsToken, "bitbucket-server: GET "+path, "no default branch")
	_, err = p.DefaultBranch(t.Context(), "SHOP", "shop")
	noSecret(t, err, bbsToken, "bitbucket-server: GET "+path, "404")
}

// Open lists the repository's open pull requests from its own branches
// once for every key, page by page: claimwarden's own under the prefix,
// by key.
func TestBitbucketServerOpen(t *testing.T) {
	other := strings.ReplaceAll(bbsPR(5, "OPEN", "claimwarden-bot", false, "main", ""), prBranch, "feature/x")
	s := serveBBS(t, bbsUser,
		exchange{method: "GET", path: bbsRepo + "/pull-requests", query: "state=OPEN&direction=OUTGOING&order=NEWEST&limit=100&start=0", status: 200,
			body: `{"values":[` + bbsPR(9, "OPEN", "claimwarden-bot", true, "main", "") + "," + bbsPR(7, "OPEN", "mallory", false, "main", "") + "," + other +
				`],"isLastPage":false,"nextPageStart":3}`},
		exchange{method: "GET", path: bbsRepo + "/pull-requests", query: "state=OPEN&direction=OUTGOING&order=NEWEST&limit=100&start=3", status: 200,
			body: `{"values":[` + bbsPR(3, "OPEN", "claimwarden-bot", false, "main", "") + `],"isLastPage":true}`})
	got, err := bbsProposer(t, s).(pullrequest.OpenLister).Open(t.Context(), "SHOP", "shop", "autoresize/")
	if err != nil {
		t.Fatal(err)
	}
	if pr, ok := got[prKey]; len(got) != 1 || !ok || pr.Number != 3 || pr.Head != "head3" {
		t.Errorf("Open = %+v, want only claimwarden's 3 (%s)", got, prKey)
	}
}
