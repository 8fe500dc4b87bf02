package gitstatus

import (
	"net/http"
	"testing"
)

// Bitbucket Server / Data Center: the HTTPS clone URL's /scm/ is dropped,
// the build goes to the repository-scoped builds API with a bearer HTTP
// access token, and the server answers 204.
func TestBitbucketServerPost(t *testing.T) {
	srv := newAPIServer(t, http.StatusNoContent, nil, "")
	repo, err := ParseRepositoryURL(srv.URL + "/scm/PROJ/shop.git")
	if err != nil {
		t.Fatal(err)
	}
	err = newTestProvider(t, BitbucketServer, srv.URL).Post(t.Context(), repo, testSHA, Status{
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
	repo, err := ParseRepositoryURL("ssh://git@bitbucket.example.com:7999/proj/shop.git")
	if err != nil {
		t.Fatal(err)
	}
	if err := newTestProvider(t, BitbucketServer, srv.URL+"/bitbucket").Post(t.Context(), repo, testSHA, Status{State: Pending, Context: "c"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	assertRequest(t, srv.only(t), "POST", "/bitbucket/rest/api/latest/projects/proj/repos/shop/commits/"+testSHA+"/builds", map[string]any{
		"key": "c", "state": "INPROGRESS", "name": "c", "description": "",
		"url": srv.URL + "/bitbucket/projects/proj/repos/shop/commits/" + testSHA,
	})
}

func TestBitbucketServerErrorClassification(t *testing.T) {
	testErrorClassification(t, BitbucketServer, Repository{Host: "bb.example.com", Path: "PROJ/shop", Owner: "PROJ", Name: "shop"})
}
