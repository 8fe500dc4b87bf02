package prcomment

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// Against a real Gitea: a pull request with a reviewer's comment gets one
// comment per key, which re-runs edit in place (same comment ID), also
// through a token that may not read who it is.
func TestGiteaUpsertOnRealGitea(t *testing.T) {
	srv := gitea.StartT(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	cloneURL, err := srv.CreateRepo(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.PushCommit(ctx, "shop", map[string]string{"apps/db.yaml": "size: 10Gi\n"}, "db"); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateBranch(ctx, "shop", "grow-db", "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.PushCommitTo(ctx, "shop", "grow-db", map[string]string{"apps/db.yaml": "size: 20Gi\n"}, "grow db"); err != nil {
		t.Fatal(err)
	}
	number, err := srv.CreatePullRequest(ctx, "shop", "grow-db", "main", "Grow db")
	if err != nil {
		t.Fatal(err)
	}
	commentsPath := fmt.Sprintf("/repos/%s/shop/issues/%d/comments", srv.User, number)
	if err := srv.API(ctx, http.MethodPost, commentsPath, map[string]string{"body": "LGTM"}, nil); err != nil {
		t.Fatal(err)
	}

	// As claimwarden check finds the host: from the clone URL.
	repo, err := githost.ParseRepositoryURL(cloneURL)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := githost.ResolveHost(repo, []githost.Host{{URL: srv.URL, Type: githost.Gitea}})
	if !ok {
		t.Fatalf("ResolveHost(%s) found no host", cloneURL)
	}
	h.Token = srv.Token
	c, err := New(h, githost.Clients{})
	if err != nil {
		t.Fatal(err)
	}

	// ours returns the comments with key's marker, failing unless there is
	// exactly one, and checks how many comments the pull request has.
	ours := func(key string, total int) gitea.Comment {
		t.Helper()
		all, err := srv.IssueComments(ctx, "shop", number)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != total {
			t.Fatalf("pull request has %d comments, want %d: %+v", len(all), total, all)
		}
		var marked []gitea.Comment
		for _, cm := range all {
			if strings.Contains(cm.Body, Marker(key)) {
				marked = append(marked, cm)
			}
		}
		if len(marked) != 1 {
			t.Fatalf("%d comments carry the marker of %q, want 1: %+v", len(marked), key, all)
		}
		return marked[0]
	}

	url1, err := c.Upsert(ctx, repo, number, "prod", "## claimwarden check\nweb: allowed\n")
	if err != nil {
		t.Fatalf("first Upsert: %v", err)
	}
	first := ours("prod", 2)
	if first.Body != Marker("prod")+"\n## claimwarden check\nweb: allowed\n" || first.User != srv.User {
		t.Errorf("created comment %+v", first)
	}
	if want := fmt.Sprintf("%s/%s/shop/pulls/%d#issuecomment-%d", srv.URL, srv.User, number, first.ID); url1 != want {
		t.Errorf("URL = %q, want %q", url1, want)
	}

	url2, err := c.Upsert(ctx, repo, number, "prod", "## claimwarden check\nweb: denied\n")
	if err != nil {
		t.Fatalf("second Upsert: %v", err)
	}
	second := ours("prod", 2)
	if second.ID != first.ID || second.Body != Marker("prod")+"\n## claimwarden check\nweb: denied\n" || url2 != url1 {
		t.Errorf("second Upsert: comment %+v at %s, want comment %d edited at %s", second, url2, first.ID, url1)
	}

	// Another key is another comment; "prod" stays as it is.
	if _, err := c.Upsert(ctx, repo, number, "staging", "staging: allowed"); err != nil {
		t.Fatalf("Upsert staging: %v", err)
	}
	if staging := ours("staging", 3); staging.ID == first.ID {
		t.Errorf("staging edited the prod comment")
	}
	if p := ours("prod", 3); p.Body != second.Body {
		t.Errorf("prod comment changed by the staging Upsert: %q", p.Body)
	}

	// A token limited to issues may not read GET /user (the premise), so the
	// identity is unknown: the first comment with the marker is edited.
	limited, err := srv.CreateToken(ctx, "comments-only", "write:issue", "read:repository")
	if err != nil {
		t.Fatal(err)
	}
	client, err := githost.Clients{}.Gitea(ctx, githost.Host{URL: srv.URL, Type: githost.Gitea, Token: limited})
	if err != nil {
		t.Fatal(err)
	}
	if _, resp, err := client.GetMyUserInfo(); resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("GET /user with a write:issue token: %v, want 403", err)
	}
	h.Token = limited
	c2, err := New(h, githost.Clients{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Upsert(ctx, repo, number, "prod", "## claimwarden check\nweb: allowed again\n"); err != nil {
		t.Fatalf("Upsert with the limited token: %v", err)
	}
	if third := ours("prod", 3); third.ID != first.ID || !strings.HasSuffix(third.Body, "allowed again\n") {
		t.Errorf("limited token: comment %+v, want comment %d edited", third, first.ID)
	}

	// A refusal names the pull request and is permanent.
	missing := githost.Repository{Host: repo.Host, Path: srv.User + "/missing", Owner: srv.User, Name: "missing"}
	_, err = c.Upsert(ctx, missing, 1, "prod", "x")
	var perm *githost.PermanentError
	want := fmt.Sprintf("comment %q on pull request %s/%s/missing#1: gitea: GET repos/%s/missing/issues/1/comments (page 1): 404 Not Found", "prod", repo.Host, srv.User, srv.User)
	if !errors.As(err, &perm) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("missing repository: %v (%T), want a *githost.PermanentError starting %q", err, err, want)
	}
}
