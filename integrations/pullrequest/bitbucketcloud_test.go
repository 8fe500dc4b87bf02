package pullrequest_test

import (
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
)

const (
	bbcToken = "bbc-secret0123456789"
	bbcRepo  = "/2.0/repositories/acme/shop"
)

func bbcProposer(t *testing.T, s *script) pullrequest.Proposer {
	t.Helper()
	p, err := pullrequest.New(githost.Host{URL: s.URL, Type: githost.BitbucketCloud, Token: bbcToken}, githost.Clients{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func serveBBC(t *testing.T, want ...exchange) *script {
	return serve(t, "Authorization", "Bearer "+bbcToken, want...)
}

// formFields checks a multipart/form-data body holds exactly want.
func formFields(want map[string]string) func(*testing.T, *http.Request, []byte) {
	return func(t *testing.T, r *http.Request, body []byte) {
		t.Helper()
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/form-data" {
			t.Errorf("Content-Type %q, want multipart/form-data", r.Header.Get("Content-Type"))
			return
		}
		form, err := multipart.NewReader(strings.NewReader(string(body)), params["boundary"]).ReadForm(1 << 20)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for k, v := range form.Value {
			got[k] = strings.Join(v, ",")
		}
		if len(got) != len(want) {
			t.Errorf("form %q, want %q", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("form field %q = %q, want %q", k, got[k], v)
			}
		}
	}
}

const bbcOpenQuery = `q=source.branch.name="` + prBranch + `"&state=OPEN&sort=-created_on&pagelen=50`

// bbcUser answers GET /2.0/user: the token is account {cw}'s.
var bbcUser = exchange{method: "GET", path: "/2.0/user", status: 200, body: `{"uuid":"{cw}","display_name":"claimwarden"}`}

// bbcPR is a pull request as Bitbucket Cloud lists it, from prBranch: its
// source repository is the destination ({r}) or a fork ({fork}); author is
// its author's UUID.
func bbcPR(id int, state, author string, fork bool, dest, extra string) string {
	source := "{r}"
	if fork {
		source = "{fork}"
	}
	return fmt.Sprintf(`{"id":%d,"state":%q,"links":{"html":{"href":"https://bitbucket.org/acme/shop/pull-requests/%d"}},"author":{"uuid":%q,"display_name":"name of %s"},`+
		`"source":{"branch":{"name":%q},"commit":{"hash":"head%d"},"repository":{"uuid":%q}},"destination":{"branch":{"name":%q},"repository":{"uuid":"{r}"}}%s}`,
		id, state, id, author, author, prBranch, id, source, dest, extra)
}

// bbcCommit: main's head, the branch's lookup (answering branchStatus),
// its deletion when it exists, then the one commit with both files.
func bbcCommit(branchStatus int) []exchange {
	ex := []exchange{
		{method: "GET", path: bbcRepo + "/refs/branches/main", status: 200, body: `{"name":"main","target":{"hash":"base1"}}`},
		{method: "GET", path: bbcRepo + "/refs/branches/" + prBranch, status: branchStatus,
			body: map[int]string{200: `{"name":"` + prBranch + `","target":{"hash":"old"}}`, 404: `{"type":"error","error":{"message":"Branch not found"}}`}[branchStatus]},
	}
	if branchStatus == 200 {
		ex = append(ex, exchange{method: "DELETE", path: bbcRepo + "/refs/branches/" + prBranch, status: 204})
	}
	return append(ex, exchange{method: "POST", path: bbcRepo + "/src", status: 201,
		header: map[string]string{"Location": "https://api.bitbucket.org/2.0/repositories/acme/shop/commit/c2"},
		check: formFields(map[string]string{
			"message": "web: data 20Gi", "branch": prBranch, "parents": "base1",
			"apps/web.yaml": "storage: 20Gi\n", "apps/web-pdb.yaml": "kind: PodDisruptionBudget\n",
		})})
}

// The open pull requests are searched before the branch is written and
// again after (the branch's deletion may have declined claimwarden's).
func TestBitbucketCloudOpensPullRequest(t *testing.T) {
	open := exchange{method: "GET", path: bbcRepo + "/pullrequests", query: bbcOpenQuery, status: 200,
		body: `{"values":[` + bbcPR(14, "OPEN", "{cw}", true, "main", "") + "," + bbcPR(13, "OPEN", "{m}", false, "release", "") + `]}`}
	want := append([]exchange{bbcUser, open}, bbcCommit(404)...)
	want = append(want, open,
		exchange{method: "POST", path: bbcRepo + "/pullrequests", status: 201,
			body: `{"id":12,"state":"OPEN","links":{"html":{"href":"https://bitbucket.org/acme/shop/pull-requests/12"}}}`,
			check: jsonFields(map[string]any{"title": "Grow shop/web data to 20Gi", "description": "data-web-0 is 91% full.",
				"source": map[string]any{"branch": map[string]any{"name": prBranch}}, "destination": map[string]any{"branch": map[string]any{"name": "main"}}})},
	)
	pr, err := bbcProposer(t, serveBBC(t, want...)).Propose(t.Context(), change("acme"))
	if err != nil || pr.Number != 12 || pr.State != pullrequest.Open || pr.URL != "https://bitbucket.org/acme/shop/pull-requests/12" || pr.Head != "c2" {
		t.Fatalf("Propose: %+v, %v; want open pull request 12 at c2", pr, err)
	}
}

// The existing branch is deleted and made again from main's head; the
// open pull request is updated.
func TestBitbucketCloudUpdatesOpenPullRequest(t *testing.T) {
	open := exchange{method: "GET", path: bbcRepo + "/pullrequests", query: bbcOpenQuery, status: 200,
		body: `{"values":[` + bbcPR(14, "OPEN", "{m}", true, "main", "") + "," + bbcPR(12, "OPEN", "{cw}", false, "main", "") + `]}`}
	want := append([]exchange{bbcUser, open}, bbcCommit(200)...)
	want = append(want, open,
		exchange{method: "PUT", path: bbcRepo + "/pullrequests/12", status: 200, body: `{"id":12,"state":"OPEN"}`,
			check: jsonFields(map[string]any{"title": "Grow shop/web data to 20Gi", "description": "data-web-0 is 91% full."})},
	)
	pr, err := bbcProposer(t, serveBBC(t, want...)).Propose(t.Context(), change("acme"))
	if err != nil || pr.Number != 12 || pr.State != pullrequest.Open || pr.Head != "c2" {
		t.Fatalf("Propose: %+v, %v; want pull request 12 updated, at c2", pr, err)
	}
}

// Deleting the branch declined claimwarden's open pull request: the search
// after the rebuild finds none open, and a new one is created.
func TestBitbucketCloudOpensAnewWhenTheDeletionDeclined(t *testing.T) {
	want := append([]exchange{bbcUser, {method: "GET", path: bbcRepo + "/pullrequests", query: bbcOpenQuery, status: 200,
		body: `{"values":[` + bbcPR(12, "OPEN", "{cw}", false, "main", "") + `]}`}}, bbcCommit(200)...)
	want = append(want,
		exchange{method: "GET", path: bbcRepo + "/pullrequests", query: bbcOpenQuery, status: 200, body: `{"values":[]}`},
		exchange{method: "POST", path: bbcRepo + "/pullrequests", status: 201, body: `{"id":15,"state":"OPEN"}`,
			check: jsonFields(map[string]any{"source": map[string]any{"branch": map[string]any{"name": prBranch}}, "destination": map[string]any{"branch": map[string]any{"name": "main"}}})},
	)
	pr, err := bbcProposer(t, serveBBC(t, want...)).Propose(t.Context(), change("acme"))
	if err != nil || pr.Number != 15 || pr.Head != "c2" {
		t.Fatalf("Propose: %+v, %v; want a new pull request 15 at c2", pr, err)
	}
}

// Another user's open pull request from the repository's own branch of
// that name, to the same destination, is neither edited nor duplicated:
// the error names it. Nothing is written: its branch is neither deleted
// nor committed to (the script fails any request past the search).
func TestBitbucketCloudLeavesAnotherUsersPullRequest(t *testing.T) {
	s := serveBBC(t, bbcUser,
		exchange{method: "GET", path: bbcRepo + "/pullrequests", query: bbcOpenQuery, status: 200, body: `{"values":[` + bbcPR(13, "OPEN", "{m}", false, "main", "") + `]}`},
	)
	_, err := bbcProposer(t, s).Propose(t.Context(), change("acme"))
	noSecret(t, err, bbcToken, "https://bitbucket.org/acme/shop/pull-requests/13", `opened by "name of {m}"`)
}

// Last is the newest pull request of the branch that claimwarden opened:
// neither a fork's (declined or open) nor another user's counts.
func TestBitbucketCloudLast(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	on := `,"updated_on":"2026-03-01T10:00:00.000000+00:00"`
	declined := &pullrequest.PullRequest{Number: 5, State: pullrequest.Closed, ClosedAt: at, Head: "head5"}
	cases := []struct {
		name, body string
		want       *pullrequest.PullRequest
	}{
		{"none", `{"values":[]}`, nil},
		{"open", `{"values":[` + bbcPR(3, "OPEN", "{cw}", false, "main", `,"updated_on":"2026-02-01T10:00:00.000000+00:00"`) + `]}`, &pullrequest.PullRequest{Number: 3, State: pullrequest.Open, Head: "head3"}},
		{"merged", `{"values":[` + bbcPR(4, "MERGED", "{cw}", false, "main", on) + `]}`, &pullrequest.PullRequest{Number: 4, State: pullrequest.Merged, ClosedAt: at, Head: "head4"}},
		{"declined", `{"values":[` + bbcPR(5, "DECLINED", "{cw}", false, "main", on) + `]}`, declined},
		{"a fork's and another user's", `{"values":[` + bbcPR(7, "DECLINED", "{cw}", true, "main", on) + "," + bbcPR(6, "OPEN", "{m}", false, "main", "") + `]}`, nil},
		{"claimwarden's behind them", `{"values":[` + bbcPR(7, "DECLINED", "{m}", true, "main", on) + "," + bbcPR(5, "DECLINED", "{cw}", false, "main", on) + `]}`, declined},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := serveBBC(t, bbcUser, exchange{method: "GET", path: bbcRepo + "/pullrequests", status: 200, body: tc.body,
				query: `q=source.branch.name="` + prBranch + `"&state=OPEN&state=MERGED&state=DECLINED&state=SUPERSEDED&sort=-created_on&pagelen=50`})
			got, err := bbcProposer(t, s).Last(t.Context(), "acme", "shop", prKey)
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && (got.Number != tc.want.Number || got.State != tc.want.State || !got.ClosedAt.Equal(tc.want.ClosedAt) || got.Head != tc.want.Head)) {
				t.Errorf("Last = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBitbucketCloudFile(t *testing.T) {
	path := bbcRepo + "/src/main/apps/web.yaml"
	plain := map[string]string{"Content-Type": "text/plain"}
	s := serveBBC(t,
		exchange{method: "GET", path: path, status: 200, body: "storage: 10Gi\n", header: plain},
		exchange{method: "GET", path: path, status: 404, body: `{"type":"error","error":{"message":"No such file or directory: apps/web.yaml"}}`},
		exchange{method: "GET", path: path, status: 200, body: strings.Repeat("x", pullrequest.MaxFileBytes+1), header: plain},
	)
	p := bbcProposer(t, s)
	if got, err := p.File(t.Context(), "acme", "shop", "main", "apps/web.yaml"); err != nil || string(got) != "storage: 10Gi\n" {
		t.Errorf("File: %q, %v", got, err)
	}
	if _, err := p.File(t.Context(), "acme", "shop", "main", "apps/web.yaml"); !errors.Is(err, pullrequest.ErrNotFound) {
		t.Errorf("404: %v, want ErrNotFound", err)
	}
	if _, err := p.File(t.Context(), "acme", "shop", "main", "apps/web.yaml"); !errors.Is(err, pullrequest.ErrTooLarge) {
		t.Errorf("over MaxFileBytes: %v, want ErrTooLarge", err)
	}
}

// The directory is listed at every depth, following next on the API host.
func TestBitbucketCloudFiles(t *testing.T) {
	s := serveBBC(t,
		exchange{method: "GET", path: bbcRepo + "/src/main/apps/", query: "max_depth=100&pagelen=100", status: 200},
		exchange{method: "GET", path: bbcRepo + "/src/main/apps/", query: "max_depth=100&pagelen=100&page=2", status: 200,
			body: `{"values":[{"type":"commit_file","path":"apps/db/kustomization.yaml"}]}`},
	)
	s.want[0].body = `{"values":[{"type":"commit_file","path":"apps/web.yaml"},{"type":"commit_directory","path":"apps/db"}],
		"next":"` + s.URL + bbcRepo + `/src/main/apps/?max_depth=100&pagelen=100&page=2"}`
	files, err := bbcProposer(t, s).Files(t.Context(), "acme", "shop", "main", "./apps/")
	if err != nil || strings.Join(files, ",") != "apps/db/kustomization.yaml,apps/web.yaml" {
		t.Errorf("Files: %q, %v; want the two under apps/, sorted", files, err)
	}
}

func TestBitbucketCloudErrorNamesRequestNotToken(t *testing.T) {
	s := serveBBC(t, bbcUser, exchange{method: "GET", path: bbcRepo + "/pullrequests", query: bbcOpenQuery, status: 200, body: `{"values":[]}`},
		exchange{method: "GET", path: bbcRepo + "/refs/branches/main", status: 403,
			body: `{"type":"error","error":{"message":"Token ` + bbcToken + ` lacks repository:write"}}`})
	_, err := bbcProposer(t, s).Propose(t.Context(), change("acme"))
	noSecret(t, err, bbcToken, "bitbucket-cloud: GET /2.0/repositories/acme/shop/refs/branches/main", "403")
}

func TestBitbucketCloudDefaultBranch(t *testing.T) {
	s := serveBBC(t,
		exchange{method: "GET", path: bbcRepo, status: 200, body: `{"full_name":"acme/shop","mainbranch":{"type":"branch","name":"trunk"}}`},
		exchange{method: "GET", path: bbcRepo, status: 200, body: `{"full_name":"acme/shop","mainbranch":null}`},
		exchange{method: "GET", path: bbcRepo, status: 404, body: `{"type":"error","error":{"message":"Repository acme/shop not found for ` + bbcToken + `"}}`},
	)
	p := bbcProposer(t, s)
	if got, err := p.DefaultBranch(t.Context(), "acme", "shop"); err != nil || got != "trunk" {
		t.Errorf("DefaultBranch: %q, %v; want trunk", got, err)
	}
	_, err := p.DefaultBranch(t.Context(), "acme", "shop")
	noSecret(t, err, bbcToken, "bitbucket-cloud: GET /2.0/repositories/acme/shop", "no default branch")
	_, err = p.DefaultBranch(t.Context(), "acme", "shop")
	noSecret(t, err, bbcToken, "bitbucket-cloud: GET /2.0/repositories/acme/shop", "404")
}

// Open lists the open pull requests from branches under the prefix once
// for every key, following next links on the API's host: claimwarden's
// own from the repository's branches, by key; a fork's and another
// user's are not among them. A next link to another host is refused (the
// token would go with it).
func TestBitbucketCloudOpen(t *testing.T) {
	query := `q=source.branch.name ~ "claimwarden/autoresize/"&state=OPEN&sort=-created_on&pagelen=50`
	db := strings.ReplaceAll(bbcPR(4, "OPEN", "{cw}", false, "main", ""), prBranch, "claimwarden/autoresize/shop/db")
	s := serveBBC(t, bbcUser,
		exchange{method: "GET", path: bbcRepo + "/pullrequests", query: query, status: 200,
			body: `{"values":[` + bbcPR(9, "OPEN", "{cw}", true, "main", "") + "," + bbcPR(7, "OPEN", "{mallory}", false, "main", "") + "," +
				bbcPR(3, "OPEN", "{cw}", false, "main", "") + `],"next":"NEXT"}`},
		exchange{method: "GET", path: bbcRepo + "/pullrequests", query: "page=2", status: 200, body: `{"values":[` + db + `]}`})
	// The next link names the fake's own URL, known once it listens.
	s.mu.Lock()
	s.want[1].body = strings.Replace(s.want[1].body, "NEXT", s.URL+bbcRepo+"/pullrequests?page=2", 1)
	s.mu.Unlock()
	got, err := bbcProposer(t, s).(pullrequest.OpenLister).Open(t.Context(), "acme", "shop", "autoresize/")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[prKey].Number != 3 || got["autoresize/shop/db"].Number != 4 || got[prKey].Head != "head3" {
		t.Errorf("Open = %+v, want claimwarden's 3 (%s) and 4 (autoresize/shop/db)", got, prKey)
	}

	s = serveBBC(t, bbcUser, exchange{method: "GET", path: bbcRepo + "/pullrequests", query: query, status: 200,
		body: `{"values":[],"next":"https://evil.example/2.0/repositories/acme/shop/pullrequests?page=2"}`})
	if _, err := bbcProposer(t, s).(pullrequest.OpenLister).Open(t.Context(), "acme", "shop", "autoresize/"); err == nil || !strings.Contains(err.Error(), "is not on") {
		t.Errorf("a next link to another host: %v, want it refused", err)
	}
}
