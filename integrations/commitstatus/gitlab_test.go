package commitstatus

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

var gitlabRepo = githost.Repository{Host: "gitlab.example.com", Path: "group/sub/name", Owner: "group/sub", Name: "name"}

// The project is addressed by its URL-encoded full path, subgroups
// included (group%2Fsub%2Fname, not decoded to slashes); the token goes in
// PRIVATE-TOKEN; "name" carries the context.
func TestGitLabPost(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{"id":1,"status":"failed"}`)
	err := newTestProvider(t, githost.GitLab, srv.URL).Post(t.Context(), gitlabRepo, testSHA, Status{
		State: Failure, Context: "claimwarden/shop/web", Description: "denied", TargetURL: "https://dash.example.com/r/1",
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	got := srv.only(t)
	assertRequest(t, got, "POST", "/api/v4/projects/group%2Fsub%2Fname/statuses/"+testSHA, map[string]any{
		"state": "failed", "name": "claimwarden/shop/web", "description": "denied", "target_url": "https://dash.example.com/r/1",
	})
	if tok := got.Header.Get("PRIVATE-TOKEN"); tok != testToken {
		t.Errorf("PRIVATE-TOKEN = %q, want the token", tok)
	}
	if a := got.Header.Get("Authorization"); a != "" {
		t.Errorf("Authorization = %q, want none (the token goes in PRIVATE-TOKEN)", a)
	}
}

// GitLab has no "error" state: failure and error both become "failed".
func TestGitLabStateMapping(t *testing.T) {
	for state, want := range map[State]string{Pending: "pending", Success: "success", Failure: "failed", Error: "failed"} {
		srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
		if err := newTestProvider(t, githost.GitLab, srv.URL).Post(t.Context(), gitlabRepo, testSHA, Status{State: state, Context: "c"}); err != nil {
			t.Fatalf("Post %s: %v", state, err)
		}
		assertRequest(t, srv.only(t), "POST", "/api/v4/projects/group%2Fsub%2Fname/statuses/"+testSHA, map[string]any{
			"state": want, "name": "c", "description": "",
		})
	}
}

// An instance served under a sub-path: its API is under the sub-path, and
// the sub-path an HTTPS clone URL carries is not part of the project path.
func TestGitLabSubPathInstance(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	repo, err := githost.ParseRepositoryURL("https://git.example.com/gitlab/group/my.app.git")
	if err != nil {
		t.Fatal(err)
	}
	if err := newTestProvider(t, githost.GitLab, srv.URL+"/gitlab/").Post(t.Context(), repo, testSHA, Status{State: Success, Context: "c"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	// client-go escapes "." too (%2E), which GitLab decodes like %2F.
	if got, want := srv.only(t).EscapedPath, "/gitlab/api/v4/projects/group%2Fmy%2Eapp/statuses/"+testSHA; got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
}

// GitLab refuses to set the state a status already has; the commit shows
// it, so the post succeeded in effect. Any other 400 is permanent.
func TestGitLabSameStateIsNotAnError(t *testing.T) {
	srv := newAPIServer(t, http.StatusBadRequest, nil, `{"message":"Cannot transition status via :enqueue from :pending (Reasons: )"}`)
	if err := newTestProvider(t, githost.GitLab, srv.URL).Post(t.Context(), gitlabRepo, testSHA, Status{State: Pending, Context: "c"}); err != nil {
		t.Errorf("Post of the state the status has: %v, want nil", err)
	}
	srv = newAPIServer(t, http.StatusBadRequest, nil, `{"message":{"state":["is invalid"]}}`)
	err := newTestProvider(t, githost.GitLab, srv.URL).Post(t.Context(), gitlabRepo, testSHA, Status{State: Pending, Context: "c"})
	var perm *githost.PermanentError
	if !errors.As(err, &perm) {
		t.Errorf("other 400: %v (%T), want *PermanentError", err, err)
	}
}

// client-go would retry 429 and 5xx five times by itself; the Reporter
// must see the first answer, so exactly one request is made.
func TestGitLabDoesNotRetryItself(t *testing.T) {
	srv := newAPIServer(t, http.StatusServiceUnavailable, nil, `{"message":"down"}`)
	_ = newTestProvider(t, githost.GitLab, srv.URL).Post(t.Context(), gitlabRepo, testSHA, Status{State: Pending, Context: "c"})
	if n := len(srv.requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

func TestGitLabErrorClassification(t *testing.T) {
	testErrorClassification(t, githost.GitLab, gitlabRepo)
}

// Shows asks for the context's statuses by name, newest first, with
// PRIVATE-TOKEN, and compares the highest ID (GitLab before 17.8 ignores
// sort and lists oldest first) in GitLab's words: failure and error are
// both "failed".
func TestGitLabShows(t *testing.T) {
	const older = `{"id":3,"name":"claimwarden/shop/web","status":"pending","description":"rollout started"}`
	const newer = `{"id":5,"name":"claimwarden/shop/web","status":"failed","description":"denied"}`
	for name, list := range map[string]string{
		"newer first": "[" + newer + "," + older + "]",
		"older first": "[" + older + "," + newer + "]",
	} {
		t.Run(name, func(t *testing.T) {
			srv := newJSONServer(t, func(*http.Request) (http.Header, string) { return nil, list })
			sr := reader(t, githost.GitLab, srv.URL)
			for _, tc := range []struct {
				s    Status
				want bool
			}{
				{Status{State: Failure, Context: "claimwarden/shop/web", Description: "denied"}, true},
				{Status{State: Error, Context: "claimwarden/shop/web", Description: "denied"}, true},
				{Status{State: Success, Context: "claimwarden/shop/web", Description: "denied"}, false},
				{Status{State: Pending, Context: "claimwarden/shop/web", Description: "rollout started"}, false},
			} {
				if got, err := sr.Shows(t.Context(), gitlabRepo, testSHA, tc.s); err != nil || got != tc.want {
					t.Errorf("Shows(%s %q) = %v, %v; want %v", tc.s.State, tc.s.Description, got, err, tc.want)
				}
			}
			for _, r := range srv.requests() {
				assertGet(t, r, "/api/v4/projects/group%2Fsub%2Fname/repository/commits/"+testSHA+"/statuses", url.Values{
					"name": {"claimwarden/shop/web"}, "order_by": {"id"}, "sort": {"desc"}, "per_page": {"100"},
				})
				if tok := r.Header.Get("PRIVATE-TOKEN"); tok != testToken {
					t.Errorf("PRIVATE-TOKEN = %q, want the token", tok)
				}
			}
		})
	}
}

// GitLab's words for the other states: "pending" and "success".
func TestGitLabShowsStateWords(t *testing.T) {
	for state, word := range map[State]string{Pending: "pending", Success: "success"} {
		srv := newJSONServer(t, func(*http.Request) (http.Header, string) {
			return nil, `[{"id":1,"name":"c","status":"` + word + `","description":"d"}]`
		})
		if got, err := reader(t, githost.GitLab, srv.URL).Shows(t.Context(), gitlabRepo, testSHA, Status{State: state, Context: "c", Description: "d"}); err != nil || !got {
			t.Errorf("%s shown as %q: Shows = %v, %v; want true", state, word, got, err)
		}
	}
}

func TestGitLabShowsNothing(t *testing.T) {
	srv := newJSONServer(t, func(*http.Request) (http.Header, string) { return nil, `[]` })
	if got, err := reader(t, githost.GitLab, srv.URL).Shows(t.Context(), gitlabRepo, testSHA, Status{State: Success, Context: "c"}); err != nil || got {
		t.Errorf("Shows = %v, %v; want false", got, err)
	}
	srv.only(t)
}

// GitLab answers 404 for a commit or project it does not know: Post's
// permanent refusal. client-go does not retry a 5xx of a read either.
func TestGitLabShowsErrors(t *testing.T) {
	testShowsErrors(t, githost.GitLab, gitlabRepo)
	srv := newAPIServer(t, http.StatusNotFound, nil, `{"message":"404 Commit Not Found"}`)
	_, err := reader(t, githost.GitLab, srv.URL).Shows(t.Context(), gitlabRepo, testSHA, Status{State: Success, Context: "c"})
	var perm *githost.PermanentError
	if !errors.As(err, &perm) {
		t.Errorf("404: %v (%T), want a PermanentError", err, err)
	}
	srv = newAPIServer(t, http.StatusServiceUnavailable, nil, `{"message":"down"}`)
	_, _ = reader(t, githost.GitLab, srv.URL).Shows(t.Context(), gitlabRepo, testSHA, Status{State: Success, Context: "c"})
	srv.only(t)
}
