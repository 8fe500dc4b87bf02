package commitstatus

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

var giteaRepo = githost.Repository{Host: "gitea.example.com", Path: "octo/shop", Owner: "octo", Name: "shop"}

// Gitea and Forgejo: POST /api/v1/repos/{owner}/{repo}/statuses/{sha} with
// "Authorization: token <token>" and the four fields (the SDK always sends
// target_url, empty when unset, which Gitea accepts). No version probe is
// made first.
func TestGiteaPost(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{"id":1,"status":"error"}`)
	err := newTestProvider(t, githost.Gitea, srv.URL).Post(t.Context(), giteaRepo, testSHA, Status{
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
	repo, err := githost.ParseRepositoryURL("https://git.example.com/forgejo/octo/shop.git")
	if err != nil {
		t.Fatal(err)
	}
	if err := newTestProvider(t, githost.Gitea, srv.URL+"/forgejo").Post(t.Context(), repo, testSHA, Status{State: Success, Context: "c", TargetURL: "https://dash/x"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	assertRequest(t, srv.only(t), "POST", "/forgejo/api/v1/repos/octo/shop/statuses/"+testSHA, map[string]any{
		"state": "success", "context": "c", "description": "", "target_url": "https://dash/x",
	})
}

func TestGiteaRefusesNestedPath(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	err := newTestProvider(t, githost.Gitea, srv.URL).Post(t.Context(), gitlabRepo, testSHA, Status{State: Success, Context: "c"})
	var perm *githost.PermanentError
	if !errors.As(err, &perm) || len(srv.requests()) != 0 {
		t.Fatalf("Post: %v, %d requests; want a PermanentError and no request", err, len(srv.requests()))
	}
}

func TestGiteaErrorClassification(t *testing.T) {
	testErrorClassification(t, githost.Gitea, giteaRepo)
}

// Shows reads the combined status with "Authorization: token <token>" and
// compares the newest status of the context (the highest ID, whichever
// order the host lists them in; other contexts ignored). Gitea names the
// state "status".
func TestGiteaShows(t *testing.T) {
	const older = `{"id":3,"context":"claimwarden/shop/web","status":"pending","description":"rollout started"}`
	const newer = `{"id":5,"context":"claimwarden/shop/web","status":"error","description":"superseded"}`
	const other = `{"id":9,"context":"ci/build","status":"success","description":"superseded"}`
	for name, list := range map[string]string{
		"newer first": other + "," + newer + "," + older,
		"older first": older + "," + other + "," + newer,
	} {
		t.Run(name, func(t *testing.T) {
			srv := newJSONServer(t, func(*http.Request) (http.Header, string) {
				return nil, `{"state":"error","sha":"` + testSHA + `","total_count":2,"statuses":[` + list + `]}`
			})
			sr := reader(t, githost.Gitea, srv.URL)
			for _, tc := range []struct {
				s    Status
				want bool
			}{
				{Status{State: Error, Context: "claimwarden/shop/web", Description: "superseded"}, true},
				{Status{State: Failure, Context: "claimwarden/shop/web", Description: "superseded"}, false},
				{Status{State: Pending, Context: "claimwarden/shop/web", Description: "rollout started"}, false},
				{Status{State: Error, Context: "claimwarden/shop/db", Description: "superseded"}, false},
			} {
				if got, err := sr.Shows(t.Context(), giteaRepo, testSHA, tc.s); err != nil || got != tc.want {
					t.Errorf("Shows(%s %s %q) = %v, %v; want %v", tc.s.Context, tc.s.State, tc.s.Description, got, err, tc.want)
				}
			}
			reqs := srv.requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests for 4 reads, want 4 (no version probe)", len(reqs))
			}
			for _, r := range reqs {
				assertGet(t, r, "/api/v1/repos/octo/shop/commits/"+testSHA+"/status", nil)
				if a := r.Header.Get("Authorization"); a != "token "+testToken {
					t.Errorf("Authorization = %q, want token <token>", a)
				}
			}
		})
	}
}

// A commit without statuses: Gitea answers 200 with an empty list (older
// releases with an empty body); nothing is shown.
func TestGiteaShowsNothing(t *testing.T) {
	for _, body := range []string{`{"state":"","statuses":[]}`, ``} {
		srv := newJSONServer(t, func(*http.Request) (http.Header, string) { return nil, body })
		if got, err := reader(t, githost.Gitea, srv.URL).Shows(t.Context(), giteaRepo, testSHA, Status{State: Success, Context: "c"}); err != nil || got {
			t.Errorf("body %q: Shows = %v, %v; want false", body, got, err)
		}
	}
}

func TestGiteaShowsErrors(t *testing.T) {
	testShowsErrors(t, githost.Gitea, giteaRepo)
	srv := newAPIServer(t, http.StatusNotFound, nil, errorBody)
	_, err := reader(t, githost.Gitea, srv.URL).Shows(t.Context(), giteaRepo, testSHA, Status{State: Success, Context: "c"})
	var perm *githost.PermanentError
	if !errors.As(err, &perm) || strings.Contains(err.Error(), testToken) {
		t.Errorf("404: %v (%T), want a PermanentError without the token", err, err)
	}
	// A nested path is refused before any request, as by Post.
	if _, err := reader(t, githost.Gitea, srv.URL).Shows(t.Context(), gitlabRepo, testSHA, Status{State: Success, Context: "c"}); !errors.As(err, &perm) || len(srv.requests()) != 1 {
		t.Errorf("nested path: %v, %d requests; want a PermanentError and no further request", err, len(srv.requests()))
	}
}
