package gitea

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCommitStatusRoundTrip exercises what the commitstatus tests rely on: a
// repository, a commit in it, a status posted through the REST API exactly as a
// provider would post it, and the combined status read back.
func TestCommitStatusRoundTrip(t *testing.T) {
	srv := StartT(t)
	t.Logf("gitea started in %v at %s", srv.StartupTime.Round(time.Millisecond), srv.URL)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cloneURL, err := srv.CreateRepo(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/" + srv.User + "/shop.git"; cloneURL != want {
		t.Errorf("clone URL %q, want %q", cloneURL, want)
	}

	// The first commit goes into an empty repository; the second overwrites one
	// file and adds another, so both of the contents API's cases are covered.
	first, err := srv.PushCommit(ctx, "shop", map[string]string{"apps/web.yaml": "replicas: 1\n", "README.md": "shop\n"}, "first")
	if err != nil {
		t.Fatal(err)
	}
	sha, err := srv.PushCommit(ctx, "shop", map[string]string{"apps/web.yaml": "replicas: 2\n", "apps/db.yaml": "size: 10Gi\n"}, "second")
	if err != nil {
		t.Fatal(err)
	}
	if len(sha) != 40 || sha == first {
		t.Fatalf("commit SHAs %q then %q, want two distinct 40-hex SHAs", first, sha)
	}
	var commit struct {
		Parents []struct {
			SHA string `json:"sha"`
		} `json:"parents"`
	}
	if err := srv.API(ctx, http.MethodGet, "/repos/"+srv.User+"/shop/git/commits/"+sha, nil, &commit); err != nil {
		t.Fatal(err)
	}
	if len(commit.Parents) != 1 || commit.Parents[0].SHA != first {
		t.Errorf("parents of the second commit %+v, want [%s]", commit.Parents, first)
	}

	// No status yet: Gitea reports the combined state as pending with no statuses.
	state, statuses, err := srv.CombinedStatus(ctx, "shop", sha)
	if err != nil {
		t.Fatal(err)
	}
	if state != "pending" || len(statuses) != 0 {
		t.Errorf("before any status: state %q, statuses %+v; want pending and none", state, statuses)
	}

	post := func(state, context, description, target string) {
		t.Helper()
		in := map[string]string{"state": state, "context": context, "description": description, "target_url": target}
		var out struct {
			Status  string `json:"status"`
			Context string `json:"context"`
		}
		if err := srv.API(ctx, http.MethodPost, "/repos/"+srv.User+"/shop/statuses/"+sha, in, &out); err != nil {
			t.Fatal(err)
		}
		// Gitea answers with the status under "status", where GitHub says "state".
		if out.Status != state || out.Context != context {
			t.Errorf("POST answered status %q context %q, want %q %q", out.Status, out.Context, state, context)
		}
	}
	post("pending", "claimwarden/shop/web", "resizing 1 of 3", "http://127.0.0.1/claims/web")
	post("success", "claimwarden/shop/web", "3 of 3 resized", "http://127.0.0.1/claims/web")
	post("failure", "claimwarden/shop/db", "denied by max-step", "")

	state, statuses, err = srv.CombinedStatus(ctx, "shop", sha)
	if err != nil {
		t.Fatal(err)
	}
	// One failing context makes the commit fail; each context shows only its latest.
	if state != "failure" {
		t.Errorf("combined state %q, want failure", state)
	}
	want := map[string]CommitStatus{
		"claimwarden/shop/web": {"claimwarden/shop/web", "success", "3 of 3 resized", "http://127.0.0.1/claims/web"},
		"claimwarden/shop/db":  {"claimwarden/shop/db", "failure", "denied by max-step", ""},
	}
	if len(statuses) != len(want) {
		t.Errorf("statuses %+v, want one per context: %+v", statuses, want)
	}
	for _, got := range statuses {
		if got != want[got.Context] {
			t.Errorf("status %+v, want %+v", got, want[got.Context])
		}
	}

	// Statuses lists every post in order, a repeated one too.
	post("success", "claimwarden/shop/web", "3 of 3 resized", "http://127.0.0.1/claims/web")
	all, err := srv.Statuses(ctx, "shop", sha)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range all {
		got = append(got, st.Context+" "+st.State)
	}
	if want := []string{"claimwarden/shop/web pending", "claimwarden/shop/web success", "claimwarden/shop/db failure", "claimwarden/shop/web success"}; !slices.Equal(got, want) {
		t.Errorf("Statuses: %q, want %q", got, want)
	}

	// AllStatuses finds them by repository and commit, and the first
	// commit without any.
	every, err := srv.AllStatuses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(every["shop@"+sha]) != len(all) || len(every["shop@"+first]) != 0 || len(every) != 2 {
		t.Errorf("AllStatuses: %d statuses of %s, %d of %s, %d commits; want %d, 0, 2", len(every["shop@"+sha]), sha, len(every["shop@"+first]), first, len(every), len(all))
	}

	// The first commit has statuses of its own: none.
	if state, statuses, err := srv.CombinedStatus(ctx, "shop", first); err != nil || state != "pending" || len(statuses) != 0 {
		t.Errorf("first commit: state %q, statuses %+v, err %v; want pending, none", state, statuses, err)
	}

	// Owner-qualified names address the same repository.
	if state, _, err := srv.CombinedStatus(ctx, srv.User+"/shop", sha); err != nil || state != "failure" {
		t.Errorf("owner/name: state %q, err %v; want failure", state, err)
	}
}

// TestAnswers pins how Gitea 1.26 answers requests a status provider can get
// wrong, since githost decides from the HTTP code whether to retry. Some differ
// from GitHub's: an unknown commit is a 500 (GitHub: 422), and states are not
// validated at all.
func TestAnswers(t *testing.T) {
	srv := StartT(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := srv.CreateRepo(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	sha, err := srv.PushCommit(ctx, "shop", map[string]string{"a.yaml": "a: 1\n"}, "first")
	if err != nil {
		t.Fatal(err)
	}
	post := func(srv *Server, repo, sha string, in map[string]string) error {
		return srv.API(ctx, http.MethodPost, "/repos/"+srv.User+"/"+repo+"/statuses/"+sha, in, nil)
	}
	code := func(err error) int {
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			return apiErr.StatusCode
		}
		return 0
	}
	ok := map[string]string{"state": "success", "context": "c"}

	badToken := &Server{URL: srv.URL, User: srv.User, Token: strings.Repeat("0", 40), http: srv.http}
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"bad token", post(badToken, "shop", sha, ok), http.StatusUnauthorized},
		{"unknown repository", post(srv, "nope", sha, ok), http.StatusNotFound},
		{"unknown commit", post(srv, "shop", strings.Repeat("0", 40), ok), http.StatusInternalServerError},
	} {
		if got := code(c.err); got != c.want {
			t.Errorf("%s: %v; want HTTP %d", c.name, c.err, c.want)
		}
	}

	// Neither the state nor the description length is checked: an unknown state
	// is stored verbatim, so a provider must map states itself and truncate.
	long := strings.Repeat("d", 300)
	if err := post(srv, "shop", sha, map[string]string{"state": "bogus", "context": "c", "description": long}); err != nil {
		t.Fatalf("unknown state: %v; want it accepted", err)
	}
	_, statuses, err := srv.CombinedStatus(ctx, "shop", sha)
	if err != nil {
		t.Fatal(err)
	}
	if len(statuses) != 1 || statuses[0].State != "bogus" || statuses[0].Description != long {
		t.Errorf("statuses %+v; want the unknown state and the 300-character description stored as sent", statuses)
	}
}

// TestPullRequestHelpers exercises what the pull-request comment tests rely
// on: a branch with its own commit, a pull request from it, comments read
// back, and a token with fewer scopes than the admin's.
func TestPullRequestHelpers(t *testing.T) {
	srv := StartT(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := srv.CreateRepo(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	base, err := srv.PushCommit(ctx, "shop", map[string]string{"db.yaml": "size: 10Gi\n"}, "db")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateBranch(ctx, "shop", "grow", "main"); err != nil {
		t.Fatal(err)
	}
	head, err := srv.PushCommitTo(ctx, "shop", "grow", map[string]string{"db.yaml": "size: 20Gi\n"}, "grow")
	if err != nil {
		t.Fatal(err)
	}
	// The commit went to the branch only.
	branchHead := func(name string) string {
		var b struct {
			Commit struct {
				ID string `json:"id"`
			} `json:"commit"`
		}
		if err := srv.API(ctx, http.MethodGet, "/repos/"+srv.User+"/shop/branches/"+name, nil, &b); err != nil {
			t.Fatal(err)
		}
		return b.Commit.ID
	}
	if got := branchHead("grow"); got != head {
		t.Errorf("branch grow at %s, want %s", got, head)
	}
	if got := branchHead("main"); got != base {
		t.Errorf("branch main at %s, want %s (unchanged)", got, base)
	}

	number, err := srv.CreatePullRequest(ctx, "shop", "grow", "main", "Grow db")
	if err != nil {
		t.Fatal(err)
	}
	if number != 1 {
		t.Errorf("first pull request is number %d, want 1", number)
	}
	for _, body := range []string{"first", "second"} {
		if err := srv.API(ctx, http.MethodPost, "/repos/"+srv.User+"/shop/issues/1/comments", map[string]string{"body": body}, nil); err != nil {
			t.Fatal(err)
		}
	}
	comments, err := srv.IssueComments(ctx, "shop", number)
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 2 || comments[0].Body != "first" || comments[1].Body != "second" || comments[0].User != srv.User || comments[0].ID >= comments[1].ID {
		t.Errorf("comments %+v, want first then second by %s", comments, srv.User)
	}

	// A token limited to issues reads comments but not its user.
	tok, err := srv.CreateToken(ctx, "issues-only", "write:issue", "read:repository")
	if err != nil {
		t.Fatal(err)
	}
	limited := &Server{URL: srv.URL, User: srv.User, Token: tok, http: srv.http}
	if got, err := limited.IssueComments(ctx, "shop", number); err != nil || len(got) != 2 {
		t.Errorf("limited token: comments %+v, %v; want 2", got, err)
	}
	var apiErr *APIError
	if err := limited.API(ctx, http.MethodGet, "/user", nil, nil); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusForbidden {
		t.Errorf("limited token: GET /user: %v; want 403", err)
	}
}

// TestStopEndsProcess checks that Stop leaves nothing listening and is idempotent.
func TestStopEndsProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), defaultStartTimeout)
	defer cancel()
	srv, err := Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := srv.healthz(ctx); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("after Stop, /api/healthz: %v; want connection refused", err)
	}
}

func TestParseToken(t *testing.T) {
	out := "New user 'claimwarden' has been successfully created!\nAccess token was successfully created... 0123abcd\n"
	if tok, err := parseToken(out); err != nil || tok != "0123abcd" {
		t.Errorf("parseToken = %q, %v", tok, err)
	}
	if _, err := parseToken("New user 'x' has been successfully created!\n"); err == nil {
		t.Error("parseToken without a token: no error")
	}
}
