package commitstatus

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// Bitbucket Server / Data Center: the HTTPS clone URL's /scm/ is dropped,
// the build goes to the repository-scoped builds API with a bearer HTTP
// access token, and the server answers 204.
func TestBitbucketServerPost(t *testing.T) {
	srv := newAPIServer(t, http.StatusNoContent, nil, "")
	repo, err := githost.ParseRepositoryURL(srv.URL + "/scm/PROJ/shop.git")
	if err != nil {
		t.Fatal(err)
	}
	err = newTestProvider(t, githost.BitbucketServer, srv.URL).Post(t.Context(), repo, testSHA, Status{
		State: Success, Context: "claimwarden/shop/web", Description: "all claims resized", TargetURL: "https://dash.example.com/r/1",
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	got := srv.only(t)
	assertRequest(t, got, "POST", "/rest/api/latest/projects/PROJ/repos/shop/commits/"+testSHA+"/builds", map[string]any{
		"key": "claimwarden/shop/web", "state": "SUCCESSFUL", "name": "claimwarden/shop/web",
		"url": "https://dash.example.com/r/1", "description": "all claims resized",
	})
	if a := got.Header.Get("Authorization"); a != "Bearer "+testToken {
		t.Errorf("Authorization = %q, want Bearer <token>", a)
	}
}

// An SSH remote on port 7999 under a context path (/bitbucket): the
// project is the first path element, and without a target URL the url
// (required) links the commit page.
func TestBitbucketServerSSHRemoteAndFallbackURL(t *testing.T) {
	srv := newAPIServer(t, http.StatusNoContent, nil, "")
	repo, err := githost.ParseRepositoryURL("ssh://git@bitbucket.example.com:7999/proj/shop.git")
	if err != nil {
		t.Fatal(err)
	}
	if err := newTestProvider(t, githost.BitbucketServer, srv.URL+"/bitbucket").Post(t.Context(), repo, testSHA, Status{State: Pending, Context: "c"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	assertRequest(t, srv.only(t), "POST", "/bitbucket/rest/api/latest/projects/proj/repos/shop/commits/"+testSHA+"/builds", map[string]any{
		"key": "c", "state": "INPROGRESS", "name": "c", "description": "",
		"url": srv.URL + "/bitbucket/projects/proj/repos/shop/commits/" + testSHA,
	})
}

func TestBitbucketServerErrorClassification(t *testing.T) {
	testErrorClassification(t, githost.BitbucketServer, githost.Repository{Host: "bb.example.com", Path: "PROJ/shop", Owner: "PROJ", Name: "shop"})
}

// Shows reads the key's build status from the repository-scoped builds
// resource Post writes to (?key=, escaped by the query), with the bearer
// token. FAILED shows failure and error alike.
func TestBitbucketServerShows(t *testing.T) {
	srv := newJSONServer(t, func(*http.Request) (http.Header, string) {
		return nil, `{"key":"claimwarden/shop/web","state":"FAILED","name":"claimwarden/shop/web","description":"denied","url":"https://x","createdDate":1587533099278,"updatedDate":1587533699278}`
	})
	repo, err := githost.ParseRepositoryURL(srv.URL + "/scm/PROJ/shop.git")
	if err != nil {
		t.Fatal(err)
	}
	sr := reader(t, githost.BitbucketServer, srv.URL)
	for _, tc := range []struct {
		s    Status
		want bool
	}{
		{Status{State: Failure, Context: "claimwarden/shop/web", Description: "denied"}, true},
		{Status{State: Error, Context: "claimwarden/shop/web", Description: "denied"}, true},
		{Status{State: Pending, Context: "claimwarden/shop/web", Description: "denied"}, false},
		{Status{State: Failure, Context: "claimwarden/shop/web", Description: "allowed"}, false},
	} {
		if got, err := sr.Shows(t.Context(), repo, testSHA, tc.s); err != nil || got != tc.want {
			t.Errorf("Shows(%s %q) = %v, %v; want %v", tc.s.State, tc.s.Description, got, err, tc.want)
		}
	}
	for _, r := range srv.requests() {
		assertGet(t, r, "/rest/api/latest/projects/PROJ/repos/shop/commits/"+testSHA+"/builds", url.Values{"key": {"claimwarden/shop/web"}})
		if a := r.Header.Get("Authorization"); a != "Bearer "+testToken {
			t.Errorf("Authorization = %q, want Bearer <token>", a)
		}
	}
}

// The other states, under a context path, from the key Post uses.
func TestBitbucketServerShowsStates(t *testing.T) {
	for state, word := range map[State]string{Pending: "INPROGRESS", Success: "SUCCESSFUL"} {
		srv := newJSONServer(t, func(*http.Request) (http.Header, string) {
			return nil, `{"key":"c","state":"` + word + `","description":"d"}`
		})
		repo, err := githost.ParseRepositoryURL("ssh://git@bitbucket.example.com:7999/proj/shop.git")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := reader(t, githost.BitbucketServer, srv.URL+"/bitbucket").Shows(t.Context(), repo, testSHA, Status{State: state, Context: "c", Description: "d"}); err != nil || !got {
			t.Errorf("%s shown as %s: Shows = %v, %v; want true", state, word, got, err)
		}
		assertGet(t, srv.only(t), "/bitbucket/rest/api/latest/projects/proj/repos/shop/commits/"+testSHA+"/builds", url.Values{"key": {"c"}})
	}
}

// 404: the commit has no build of that key.
func TestBitbucketServerShowsNothing(t *testing.T) {
	srv := newAPIServer(t, http.StatusNotFound, nil, `{"errors":[{"message":"No build status with key c"}]}`)
	repo := githost.Repository{Host: "bb.example.com", Path: "PROJ/shop", Owner: "PROJ", Name: "shop"}
	if got, err := reader(t, githost.BitbucketServer, srv.URL).Shows(t.Context(), repo, testSHA, Status{State: Success, Context: "c"}); err != nil || got {
		t.Errorf("Shows = %v, %v; want false, nil", got, err)
	}
}

func TestBitbucketServerShowsErrors(t *testing.T) {
	testShowsErrors(t, githost.BitbucketServer, githost.Repository{Host: "bb.example.com", Path: "PROJ/shop", Owner: "PROJ", Name: "shop"})
}
