package commitstatus

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

var bitbucketCloudRepo = githost.Repository{Host: "bitbucket.org", Path: "team/shop", Owner: "team", Name: "shop"}

// POST /2.0/repositories/{workspace}/{repo_slug}/commit/{commit}/statuses/build
// with a bearer token and key, state, name, url, description.
func TestBitbucketCloudPost(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{"key":"claimwarden/shop/web"}`)
	err := newTestProvider(t, githost.BitbucketCloud, srv.URL).Post(t.Context(), bitbucketCloudRepo, testSHA, Status{
		State: Failure, Context: "claimwarden/shop/web", Description: "denied", TargetURL: "https://dash.example.com/r/1",
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	got := srv.only(t)
	assertRequest(t, got, "POST", "/2.0/repositories/team/shop/commit/"+testSHA+"/statuses/build", map[string]any{
		"key": "claimwarden/shop/web", "state": "FAILED", "name": "claimwarden/shop/web",
		"url": "https://dash.example.com/r/1", "description": "denied",
	})
	if a := got.Header.Get("Authorization"); a != "Bearer "+testToken {
		t.Errorf("Authorization = %q, want Bearer <token>", a)
	}
}

func TestBitbucketCloudStateMapping(t *testing.T) {
	for state, want := range map[State]string{Pending: "INPROGRESS", Success: "SUCCESSFUL", Failure: "FAILED", Error: "FAILED"} {
		srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
		if err := newTestProvider(t, githost.BitbucketCloud, srv.URL).Post(t.Context(), bitbucketCloudRepo, testSHA, Status{State: state, Context: "c", TargetURL: "https://x"}); err != nil {
			t.Fatalf("Post %s: %v", state, err)
		}
		assertRequest(t, srv.only(t), "POST", "/2.0/repositories/team/shop/commit/"+testSHA+"/statuses/build", map[string]any{
			"key": "c", "state": want, "name": "c", "url": "https://x", "description": "",
		})
	}
}

// A context longer than 40 characters gets a key of 40 that is the same on
// every post (so the status is updated, not duplicated) and differs from a
// context sharing its first 40 characters; the name keeps the context.
// Without a target URL, url (required) links the commit.
func TestBitbucketCloudLongContextAndFallbackURL(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	p := newTestProvider(t, githost.BitbucketCloud, srv.URL)
	long1 := "claimwarden/production-eu/postgres-primary"
	long2 := "claimwarden/production-eu/postgres-primary-replica"
	for _, ctx := range []string{long1, long1, long2} {
		if err := p.Post(t.Context(), bitbucketCloudRepo, testSHA, Status{State: Pending, Context: ctx}); err != nil {
			t.Fatalf("Post: %v", err)
		}
	}
	reqs := srv.requests()
	keys := make([]string, len(reqs))
	for i, r := range reqs {
		var body map[string]any
		assertRequestBody(t, r, &body)
		keys[i], _ = body["key"].(string)
		if len(keys[i]) > 40 {
			t.Errorf("key %q is %d bytes, want at most 40", keys[i], len(keys[i]))
		}
		if want := srv.URL + "/team/shop/commits/" + testSHA; body["url"] != want {
			t.Errorf("url = %v, want the commit page %s", body["url"], want)
		}
	}
	if keys[0] != keys[1] {
		t.Errorf("the same context got keys %q and %q", keys[0], keys[1])
	}
	if keys[0] == keys[2] {
		t.Errorf("two contexts got the same key %q", keys[0])
	}
	if !strings.HasPrefix(keys[0], "claimwarden/production-eu/") {
		t.Errorf("key %q does not start with the context", keys[0])
	}
	var first map[string]any
	assertRequestBody(t, reqs[0], &first)
	if first["name"] != long1 {
		t.Errorf("name = %v, want the full context", first["name"])
	}
}

// https://bitbucket.org goes to api.bitbucket.org, and the fallback url to
// the commit on bitbucket.org.
func TestBitbucketCloudPublicHost(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	hc, rt := redirectingClient(t, srv)
	p, err := NewProvider(githost.Host{URL: "https://bitbucket.org", Type: githost.BitbucketCloud, Token: testToken}, githost.Clients{HTTP: hc})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Post(t.Context(), bitbucketCloudRepo, testSHA, Status{State: Success, Context: "c"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	if want := "https://api.bitbucket.org/2.0/repositories/team/shop/commit/" + testSHA + "/statuses/build"; len(rt.urls) != 1 || rt.urls[0] != want {
		t.Errorf("requests went to %v, want [%s]", rt.urls, want)
	}
	var body map[string]any
	assertRequestBody(t, srv.only(t), &body)
	if want := "https://bitbucket.org/team/shop/commits/" + testSHA; body["url"] != want {
		t.Errorf("url = %v, want %s", body["url"], want)
	}
}

func TestBitbucketCloudErrorClassification(t *testing.T) {
	testErrorClassification(t, githost.BitbucketCloud, bitbucketCloudRepo)
}

// Shows reads the key's build status (the key path-escaped: "/" becomes
// %2F) with the bearer token. FAILED is what failure and error are both
// posted as, so it shows either.
func TestBitbucketCloudShows(t *testing.T) {
	srv := newJSONServer(t, func(*http.Request) (http.Header, string) {
		return nil, `{"key":"claimwarden/shop/web","state":"FAILED","name":"claimwarden/shop/web","description":"denied","url":"https://x"}`
	})
	sr := reader(t, githost.BitbucketCloud, srv.URL)
	for _, tc := range []struct {
		s    Status
		want bool
	}{
		{Status{State: Failure, Context: "claimwarden/shop/web", Description: "denied"}, true},
		{Status{State: Error, Context: "claimwarden/shop/web", Description: "denied"}, true},
		{Status{State: Success, Context: "claimwarden/shop/web", Description: "denied"}, false},
		{Status{State: Failure, Context: "claimwarden/shop/web", Description: "allowed"}, false},
	} {
		if got, err := sr.Shows(t.Context(), bitbucketCloudRepo, testSHA, tc.s); err != nil || got != tc.want {
			t.Errorf("Shows(%s %q) = %v, %v; want %v", tc.s.State, tc.s.Description, got, err, tc.want)
		}
	}
	for _, r := range srv.requests() {
		assertGet(t, r, "/2.0/repositories/team/shop/commit/"+testSHA+"/statuses/build/claimwarden%2Fshop%2Fweb", nil)
		if a := r.Header.Get("Authorization"); a != "Bearer "+testToken {
			t.Errorf("Authorization = %q, want Bearer <token>", a)
		}
	}
}

// The other states, and a long context read under the key Post uses.
func TestBitbucketCloudShowsStatesAndLongKey(t *testing.T) {
	long := "claimwarden/production-eu/postgres-primary"
	key := statusKey(long, bitbucketCloudKeyLimit)
	for state, word := range map[State]string{Pending: "INPROGRESS", Success: "SUCCESSFUL"} {
		srv := newJSONServer(t, func(*http.Request) (http.Header, string) {
			return nil, `{"key":"` + key + `","state":"` + word + `","description":"d"}`
		})
		if got, err := reader(t, githost.BitbucketCloud, srv.URL).Shows(t.Context(), bitbucketCloudRepo, testSHA, Status{State: state, Context: long, Description: "d"}); err != nil || !got {
			t.Errorf("%s shown as %s: Shows = %v, %v; want true", state, word, got, err)
		}
		if want := "/2.0/repositories/team/shop/commit/" + testSHA + "/statuses/build/" + url.PathEscape(key); srv.only(t).EscapedPath != want {
			t.Errorf("path = %s, want %s", srv.only(t).EscapedPath, want)
		}
	}
}

// 404 is Bitbucket's "no build with that key on this commit": nothing is
// shown, no error.
func TestBitbucketCloudShowsNothing(t *testing.T) {
	srv := newAPIServer(t, http.StatusNotFound, nil, `{"type":"error","error":{"message":"Commit status not found"}}`)
	if got, err := reader(t, githost.BitbucketCloud, srv.URL).Shows(t.Context(), bitbucketCloudRepo, testSHA, Status{State: Success, Context: "c"}); err != nil || got {
		t.Errorf("Shows = %v, %v; want false, nil", got, err)
	}
}

func TestBitbucketCloudShowsErrors(t *testing.T) {
	testShowsErrors(t, githost.BitbucketCloud, bitbucketCloudRepo)
	// A 2xx that is not a build status is retryable, not "shown".
	srv := newAPIServer(t, http.StatusOK, nil, `<html>`)
	got, err := reader(t, githost.BitbucketCloud, srv.URL).Shows(t.Context(), bitbucketCloudRepo, testSHA, Status{State: Success, Context: "c"})
	if err == nil || got || errorKind(err) != "retry" {
		t.Errorf("undecodable answer: Shows = %v, %v; want a retryable error", got, err)
	}
}
