package gitstatus

import (
	"errors"
	"net/http"
	"testing"
)

var giteaRepo = Repository{Host: "gitea.example.com", Path: "octo/shop", Owner: "octo", Name: "shop"}

// Gitea and Forgejo: POST /api/v1/repos/{owner}/{repo}/statuses/{sha} with
// "Authorization: token <token>" and the four fields (the SDK always sends
// target_url, empty when unset, which Gitea accepts). No version probe is
// made first.
func TestGiteaPost(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{"id":1,"status":"error"}`)
	err := newTestProvider(t, Gitea, srv.URL).Post(t.Context(), giteaRepo, testSHA, Status{
		State: Error, Context: "claimwarden/shop/web", Description: "resize failed",
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	got := srv.only(t)
	assertRequest(t, got, "POST", "/api/v1/repos/octo/shop/statuses/"+testSHA, map[string]any{
		"state": "error", "context": "claimwarden/shop/web", "description": "resize failed", "target_url": "",
	})
	if a := got.Header.Get("Authorization"); a != "token "+testToken {
		t.Errorf("Authorization = %q, want token <token>", a)
	}
}

func TestGiteaPostWithTargetURLUnderSubPath(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	repo, err := ParseRepositoryURL("https://git.example.com/forgejo/octo/shop.git")
	if err != nil {
		t.Fatal(err)
	}
	if err := newTestProvider(t, Gitea, srv.URL+"/forgejo").Post(t.Context(), repo, testSHA, Status{State: Success, Context: "c", TargetURL: "https://dash/x"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	assertRequest(t, srv.only(t), "POST", "/forgejo/api/v1/repos/octo/shop/statuses/"+testSHA, map[string]any{
		"state": "success", "context": "c", "description": "", "target_url": "https://dash/x",
	})
}

func TestGiteaRefusesNestedPath(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	err := newTestProvider(t, Gitea, srv.URL).Post(t.Context(), gitlabRepo, testSHA, Status{State: Success, Context: "c"})
	var perm *PermanentError
	if !errors.As(err, &perm) || len(srv.requests()) != 0 {
		t.Fatalf("Post: %v, %d requests; want a PermanentError and no request", err, len(srv.requests()))
	}
}

func TestGiteaErrorClassification(t *testing.T) {
	testErrorClassification(t, Gitea, giteaRepo)
}
