package pullrequest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/test/fixtures"

	"code.gitea.io/sdk/gitea"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	giteasrv "github.com/claimwarden/claimwarden/test/gitea"
)

const manifest = `# the shop's database
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: shop
spec:
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        resources:
          requests:
            storage: 10Gi
`

// proposal is the resize of web's data claims to size as autoresize makes it:
// the manifest with its one line changed.
func proposal(t *testing.T, owner, size string) pullrequest.Change {
	t.Helper()
	edited, _, err := gitedit.SetSize([]byte(manifest), gitedit.Target{Namespace: "shop", StatefulSet: "web", Template: "data"}, size)
	if err != nil {
		t.Fatal(err)
	}
	return pullrequest.Change{
		Owner: owner, Repo: "shop", Base: "main", Key: "autoresize/shop/web",
		Files: []pullrequest.File{{Path: "apps/web.yaml", Content: edited}},
		Title: "Grow shop/web data to " + size, Body: "data-web-0 is 91% full.", Message: "web: data " + size,
	}
}

// giteaShop starts a Gitea with repository shop (apps/web.yaml at 10Gi),
// and returns the proposer and an SDK client of its user, both through hc.
func giteaShop(t *testing.T) (*giteasrv.Server, *pullrequest.Gitea, *gitea.Client, *http.Client) {
	t.Helper()
	srv := giteasrv.StartT(t)
	ctx := context.Background()
	if _, err := srv.CreateRepo(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.PushCommit(ctx, "shop", map[string]string{"apps/web.yaml": manifest, "README.md": "shop\n"}, "web at 10Gi"); err != nil {
		t.Fatal(err)
	}
	base, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	sdk, err := gitea.NewClient(srv.URL, gitea.SetToken(srv.Token), gitea.SetHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return srv, &pullrequest.Gitea{Base: base, Token: srv.Token, HTTP: hc}, sdk, hc
}

// One pull request per key against a real Gitea: opened with the one
// line changed, updated in place (also by a proposer that restarted),
// never duplicated; once closed, the next proposal is a new pull request.
func TestGiteaProposesOnePullRequestPerKey(t *testing.T) {
	srv, p, sdk, hc := giteaShop(t)
	ctx := context.Background()
	if last, err := p.Last(ctx, srv.User, "shop", "autoresize/shop/web"); err != nil || last != nil {
		t.Fatalf("before any proposal: %v, %v; want none", last, err)
	}

	first, err := p.Propose(ctx, proposal(t, srv.User, "20Gi"))
	if err != nil || first.State != pullrequest.Open {
		t.Fatalf("propose: %+v, %v", first, err)
	}
	diff := prDiff(t, sdk, srv.User, first.Number)
	if removed, added := fixtures.DiffLines(diff); len(removed) != 1 || len(added) != 1 || added[0] != "            storage: 20Gi" {
		t.Errorf("pull request diff removes %q and adds %q, want the one size line:\n%s", removed, added, diff)
	}

	// Updated, by a proposer that knows nothing of the first (a restart).
	again := &pullrequest.Gitea{Base: p.Base, Token: srv.Token, HTTP: hc}
	second, err := again.Propose(ctx, proposal(t, srv.User, "30Gi"))
	if err != nil || second.Number != first.Number {
		t.Fatalf("second proposal: %+v, %v; want pull request %d updated", second, err, first.Number)
	}
	if _, added := fixtures.DiffLines(prDiff(t, sdk, srv.User, first.Number)); len(added) != 1 || added[0] != "            storage: 30Gi" {
		t.Errorf("after the update the pull request adds %q, want the 30Gi line only", added)
	}
	pr, _, err := sdk.GetPullRequest(srv.User, "shop", first.Number)
	if err != nil || pr.Title != "Grow shop/web data to 30Gi" {
		t.Errorf("title %q (%v), want the second proposal's", pr.Title, err)
	}
	if prs, _, err := sdk.ListRepoPullRequests(srv.User, "shop", gitea.ListPullRequestsOptions{State: gitea.StateAll}); err != nil || len(prs) != 1 {
		t.Errorf("%d pull requests (%v), want 1", len(prs), err)
	}

	// Closed unmerged: Last says so; a later proposal opens a new one.
	closed := gitea.StateClosed
	if _, _, err := sdk.EditPullRequest(srv.User, "shop", first.Number, gitea.EditPullRequestOption{State: &closed}); err != nil {
		t.Fatal(err)
	}
	if last, err := p.Last(ctx, srv.User, "shop", "autoresize/shop/web"); err != nil || last == nil || last.State != pullrequest.Closed || last.Number != first.Number || last.ClosedAt.IsZero() {
		t.Fatalf("after closing: %+v, %v; want %d closed, with the time", last, err, first.Number)
	}
	third, err := p.Propose(ctx, proposal(t, srv.User, "40Gi"))
	if err != nil || third.Number == first.Number || third.State != pullrequest.Open {
		t.Fatalf("after the close: %+v, %v; want a new open pull request", third, err)
	}
	if _, added := fixtures.DiffLines(prDiff(t, sdk, srv.User, third.Number)); len(added) != 1 || added[0] != "            storage: 40Gi" {
		t.Errorf("the new pull request adds %q, want the 40Gi line only", added)
	}
}

// The files an edit starts from are read through the API, bounded.
func TestGiteaReadsFiles(t *testing.T) {
	srv := giteasrv.StartT(t)
	ctx := context.Background()
	if _, err := srv.CreateRepo(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", pullrequest.MaxFileBytes+1)
	if _, err := srv.PushCommit(ctx, "shop", map[string]string{
		"apps/web.yaml": manifest, "apps/db/kustomization.yaml": "resources: []\n", "appsx/other.yaml": "a: 1\n", "big.yaml": big,
	}, "files"); err != nil {
		t.Fatal(err)
	}
	base, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pullrequest.New(githost.Host{URL: base.String(), Type: githost.Gitea, Token: srv.Token}, githost.Clients{HTTP: &http.Client{Transport: &http.Transport{Proxy: nil}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := p.Files(ctx, srv.User, "shop", "main", "./apps/")
	if err != nil || strings.Join(files, ",") != "apps/db/kustomization.yaml,apps/web.yaml" {
		t.Errorf("files under apps: %q, %v; want the two under apps/ only", files, err)
	}
	if got, err := p.File(ctx, srv.User, "shop", "main", "apps/web.yaml"); err != nil || string(got) != manifest {
		t.Errorf("apps/web.yaml: %q, %v", got, err)
	}
	if _, err := p.File(ctx, srv.User, "shop", "main", "apps/none.yaml"); !errors.Is(err, pullrequest.ErrNotFound) {
		t.Errorf("a missing file: %v, want ErrNotFound", err)
	}
	if _, err := p.File(ctx, srv.User, "shop", "main", "big.yaml"); !errors.Is(err, pullrequest.ErrTooLarge) {
		t.Errorf("a file over the bound: %v, want ErrTooLarge", err)
	}
	if got, err := p.DefaultBranch(ctx, srv.User, "shop"); err != nil || got != "main" {
		t.Errorf("DefaultBranch: %q, %v; want main", got, err)
	}
	_, err = p.DefaultBranch(ctx, srv.User, "none")
	noSecret(t, err, srv.Token, "gitea: GET repos/"+srv.User+"/none", "404")
}

func TestKeysThatAreNoBranchAreRefused(t *testing.T) {
	p := &pullrequest.Gitea{Base: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}}
	for _, key := range []string{"", "a b", "../x", "x/..", ".hidden", "a..b", "x.lock", "x/", "a\nb", strings.Repeat("k", 201)} {
		if _, err := p.Propose(context.Background(), pullrequest.Change{Key: key}); err == nil || !strings.Contains(err.Error(), "is not a key") {
			t.Errorf("key %q: %v, want refused", key, err)
		}
	}
}

func prDiff(t *testing.T, sdk *gitea.Client, owner string, number int64) string {
	t.Helper()
	d, _, err := sdk.GetPullRequestDiff(owner, "shop", number, gitea.PullRequestDiffOptions{})
	if err != nil {
		t.Fatal(fmt.Errorf("pull request %d diff: %w", number, err))
	}
	return string(d)
}

// Only claimwarden's own pull requests are its, against a real Gitea
// (issue 39): a fork's pull request from a branch of claimwarden's name,
// closed or open, neither starts the cooldown nor is adopted; another
// user's from the repository's own branch is not edited; and a commit
// pushed on top of claimwarden's branch shows as a head that is not the
// commit Propose made, and is gone once Propose rebuilds the branch.
func TestGiteaOwnsOnlyItsPullRequests(t *testing.T) {
	srv, p, admin, hc := giteaShop(t)
	ctx := context.Background()
	mallory := otherUser(t, srv.URL, admin, hc, "mallory")
	const key, branch = "autoresize/shop/web", "claimwarden/autoresize/shop/web"

	// A fork with a branch of claimwarden's name: a pull request from it
	// closed, another open, changing something else entirely.
	if _, _, err := mallory.CreateFork(srv.User, "shop", gitea.CreateForkOption{}); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateBranch(ctx, "mallory/shop", branch, "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.PushCommitTo(ctx, "mallory/shop", branch, map[string]string{"README.md": "mallory was here\n"}, "readme"); err != nil {
		t.Fatal(err)
	}
	fromFork := gitea.CreatePullRequestOption{Head: "mallory:" + branch, Base: "main", Title: "Fix the readme"}
	closedPR, _, err := mallory.CreatePullRequest(srv.User, "shop", fromFork)
	if err != nil {
		t.Fatal(err)
	}
	closed := gitea.StateClosed
	if _, _, err := mallory.EditPullRequest(srv.User, "shop", closedPR.Index, gitea.EditPullRequestOption{State: &closed}); err != nil {
		t.Fatal(err)
	}
	if last, err := p.Last(ctx, srv.User, "shop", key); err != nil || last != nil {
		t.Fatalf("with a fork's closed pull request: Last = %+v, %v; want none (no cooldown)", last, err)
	}
	openPR, _, err := mallory.CreatePullRequest(srv.User, "shop", fromFork)
	if err != nil {
		t.Fatal(err)
	}
	if last, err := p.Last(ctx, srv.User, "shop", key); err != nil || last != nil {
		t.Fatalf("with a fork's open pull request: Last = %+v, %v; want none", last, err)
	}
	made, err := p.Propose(ctx, proposal(t, srv.User, "20Gi"))
	if err != nil || made.Number == openPR.Index || made.Number == closedPR.Index || made.Head == "" {
		t.Fatalf("Propose: %+v, %v; want a pull request of claimwarden's own, at its commit", made, err)
	}
	if pr, _, err := admin.GetPullRequest(srv.User, "shop", openPR.Index); err != nil || pr.Title != "Fix the readme" || pr.Body != "" {
		t.Errorf("the fork's pull request became %q %q (%v); want it as mallory left it", pr.Title, pr.Body, err)
	}
	if last, err := p.Last(ctx, srv.User, "shop", key); err != nil || last == nil || last.Number != made.Number || last.Head != made.Head {
		t.Fatalf("Last = %+v, %v; want %d at %s", last, err, made.Number, made.Head)
	}

	// Another user's pull request from the repository's own branch of
	// another key's name: not edited, not duplicated, named; its branch is
	// not pushed to (it still ends at mallory's commit).
	const otherBranch = "claimwarden/autoresize/shop/db"
	access := gitea.AccessModeWrite
	if _, err := admin.AddCollaborator(srv.User, "shop", "mallory", gitea.AddCollaboratorOption{Permission: &access}); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateBranch(ctx, "shop", otherBranch, "main"); err != nil {
		t.Fatal(err)
	}
	malloryHead, err := srv.PushCommitTo(ctx, "shop", otherBranch, map[string]string{"README.md": "db\n"}, "readme")
	if err != nil {
		t.Fatal(err)
	}
	theirs, _, err := mallory.CreatePullRequest(srv.User, "shop", gitea.CreatePullRequestOption{Head: otherBranch, Base: "main", Title: "Not claimwarden's"})
	if err != nil {
		t.Fatal(err)
	}
	db := proposal(t, srv.User, "20Gi")
	db.Key = "autoresize/shop/db"
	if _, err := p.Propose(ctx, db); err == nil || !strings.Contains(err.Error(), theirs.HTMLURL) || !strings.Contains(err.Error(), `"mallory"`) {
		t.Errorf("Propose beside mallory's pull request from the branch: %v; want an error naming it", err)
	}
	if pr, _, err := admin.GetPullRequest(srv.User, "shop", theirs.Index); err != nil || pr.Title != "Not claimwarden's" {
		t.Errorf("mallory's pull request is titled %q (%v); want it as mallory left it", pr.Title, err)
	}
	theirsBranch, _, err := admin.GetRepoBranch(srv.User, "shop", otherBranch)
	if err != nil {
		t.Fatal(err)
	}
	if theirsBranch.Commit == nil || theirsBranch.Commit.ID != malloryHead {
		t.Errorf("branch %s is at %+v after the refused Propose; want it still at the head of mallory's pull request, %s", otherBranch, theirsBranch.Commit, malloryHead)
	}
	if last, err := p.Last(ctx, srv.User, "shop", db.Key); err != nil || last != nil {
		t.Errorf("Last of %s = %+v, %v; want none", db.Key, last, err)
	}
	// The repository's listing: claimwarden's own only, not the fork's
	// or mallory's from branches of its keys' names.
	if open, err := p.Open(ctx, srv.User, "shop", "autoresize/"); err != nil || len(open) != 1 || open[key].Number != made.Number || open[key].Head != made.Head {
		t.Errorf("Open = %+v, %v; want only %s's, %d at %s", open, err, key, made.Number, made.Head)
	}

	// A commit pushed on top of claimwarden's branch: the head is no longer
	// the commit claimwarden made; the next Propose rebuilds the branch.
	foreign, err := srv.PushCommitTo(ctx, "shop", branch, map[string]string{"README.md": "pwned\n"}, "also this")
	if err != nil {
		t.Fatal(err)
	}
	// Gitea moves a pull request's head after a push asynchronously.
	var seen string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last, err := p.Last(ctx, srv.User, "shop", key)
		if err != nil || last == nil {
			return false, err
		}
		seen = last.Head
		return last.Head == foreign, nil
	})
	if err != nil {
		t.Fatalf("the pull request's head is %s, want the pushed %s: %v", seen, foreign, err)
	}
	again, err := p.Propose(ctx, proposal(t, srv.User, "20Gi"))
	if err != nil || again.Number != made.Number || again.Head == foreign || again.Head == made.Head {
		t.Fatalf("Propose after the push: %+v, %v; want %d at a new commit", again, err, made.Number)
	}
	b, _, err := admin.GetRepoBranch(srv.User, "shop", branch)
	if err != nil || b.Commit == nil || b.Commit.ID != again.Head {
		t.Fatalf("branch %s: %+v, %v; want its head at %s", branch, b, err, again.Head)
	}
	if got, err := p.File(ctx, srv.User, "shop", branch, "README.md"); err != nil || string(got) != "shop\n" {
		t.Errorf("README.md on the rebuilt branch: %q, %v; want the base's", got, err)
	}
}

// otherUser creates user name (through the admin client) and returns a
// client authenticating as them.
func otherUser(t *testing.T, base string, admin *gitea.Client, hc *http.Client, name string) *gitea.Client {
	t.Helper()
	password, no := "pw-"+name+"-0123456789", false
	if _, _, err := admin.AdminCreateUser(gitea.CreateUserOption{Username: name, Email: name + "@example.com", Password: password, MustChangePassword: &no}); err != nil {
		t.Fatal(err)
	}
	basic, err := gitea.NewClient(base, gitea.SetBasicAuth(name, password), gitea.SetHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := basic.CreateAccessToken(gitea.CreateAccessTokenOption{Name: "test", Scopes: []gitea.AccessTokenScope{gitea.AccessTokenScopeAll}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := gitea.NewClient(base, gitea.SetToken(tok.Token), gitea.SetHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
