package commitstatus

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

var githubRepo = githost.Repository{Host: "github.example.com", Path: "octo/shop", Owner: "octo", Name: "shop"}

// GitHub Enterprise: the API is under /api/v3, the token goes as a bearer
// token, and the body carries GitHub's four fields.
func TestGitHubEnterprisePost(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{"id":1,"state":"failure"}`)
	p := newTestProvider(t, githost.GitHub, srv.URL)
	err := p.Post(t.Context(), githubRepo, testSHA, Status{
		State: Failure, Context: "claimwarden/shop/web", Description: "web-0: denied", TargetURL: "https://dash.example.com/r/1",
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	got := srv.only(t)
	assertRequest(t, got, "POST", "/api/v3/repos/octo/shop/statuses/"+testSHA, map[string]any{
		"state": "failure", "context": "claimwarden/shop/web", "description": "web-0: denied", "target_url": "https://dash.example.com/r/1",
	})
	if a := got.Header.Get("Authorization"); a != "Bearer "+testToken {
		t.Errorf("Authorization = %q, want Bearer <token>", a)
	}
}

// Without a target URL, target_url is left out rather than sent empty
// (GitHub validates it as a URL); a long description is cut to 140
// characters.
func TestGitHubPostOmitsEmptyTargetURLAndTruncates(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	long := strings.Repeat("é", 200)
	if err := newTestProvider(t, githost.GitHub, srv.URL).Post(t.Context(), githubRepo, testSHA, Status{State: Success, Context: "c", Description: long}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	assertRequest(t, srv.only(t), "POST", "/api/v3/repos/octo/shop/statuses/"+testSHA, map[string]any{
		"state": "success", "context": "c", "description": strings.Repeat("é", 139) + "…",
	})
}

// https://github.com goes to api.github.com, without an /api/v3 prefix.
func TestGitHubPublicHostUsesAPIGitHubCom(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	hc, rt := redirectingClient(t, srv)
	p, err := NewProvider(githost.Host{URL: "https://github.com", Type: githost.GitHub, Token: testToken}, githost.Clients{HTTP: hc})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Post(t.Context(), githubRepo, testSHA, Status{State: Pending, Context: "c"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	if want := "https://api.github.com/repos/octo/shop/statuses/" + testSHA; len(rt.urls) != 1 || rt.urls[0] != want {
		t.Errorf("requests went to %v, want [%s]", rt.urls, want)
	}
}

// An API host of its own (GHE.com: api.<subdomain>.ghe.com) serves the
// API at its root, for statuses and for the App token exchange alike.
func TestGitHubAPIHostWithoutPrefix(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	srv := newAPIServerFunc(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"token":"ghs_x","expires_at":"`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`"}`)
	})
	hc, rt := redirectingClient(t, srv)
	p, err := NewProvider(githost.Host{URL: "https://api.octo.ghe.com", Type: githost.GitHub, GitHubApp: &githost.GitHubApp{AppID: 7, InstallationID: 8, PrivateKey: pemKey}}, githost.Clients{HTTP: hc})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Post(t.Context(), githubRepo, testSHA, Status{State: Success, Context: "c"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	want := []string{"https://api.octo.ghe.com/app/installations/8/access_tokens", "https://api.octo.ghe.com/repos/octo/shop/statuses/" + testSHA}
	if strings.Join(rt.urls, " ") != strings.Join(want, " ") {
		t.Errorf("requests went to %v, want %v", rt.urls, want)
	}
}

func TestGitHubErrorClassification(t *testing.T) {
	testErrorClassification(t, githost.GitHub, githubRepo)
}

// After a 403 with X-RateLimit-Remaining: 0, go-github refuses further
// requests until the reset without sending them; that refusal must still be
// a *RateLimitError with the time left, not a 403 taken for permanent.
func TestGitHubRemembersPrimaryRateLimit(t *testing.T) {
	reset := time.Now().Add(90 * time.Second).Unix()
	srv := newAPIServer(t, http.StatusForbidden, http.Header{
		"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Reset": {strconv.FormatInt(reset, 10)},
	}, `{"message":"API rate limit exceeded"}`)
	p := newTestProvider(t, githost.GitHub, srv.URL)
	s := Status{State: Pending, Context: "c"}
	_ = p.Post(t.Context(), githubRepo, testSHA, s)
	err := p.Post(t.Context(), githubRepo, testSHA, s)
	var rl *githost.RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("second Post: %v (%T), want *RateLimitError", err, err)
	}
	if rl.RetryAfter < 80*time.Second || rl.RetryAfter > 90*time.Second {
		t.Errorf("RetryAfter = %v, want about 90s", rl.RetryAfter)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("server got %d requests, want 1 (the second Post must not be sent)", n)
	}
}

// GitHub's secondary limit: 403 with Retry-After and the
// secondary-rate-limits documentation URL.
func TestGitHubSecondaryRateLimit(t *testing.T) {
	srv := newAPIServer(t, http.StatusForbidden, http.Header{"Retry-After": {"42"}},
		`{"message":"You have exceeded a secondary rate limit","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`)
	err := newTestProvider(t, githost.GitHub, srv.URL).Post(t.Context(), githubRepo, testSHA, Status{State: Pending, Context: "c"})
	var rl *githost.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != 42*time.Second {
		t.Fatalf("Post: %v (%T), want *RateLimitError with RetryAfter 42s", err, err)
	}
}

func TestGitHubRefusesSubgroupPath(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	repo := githost.Repository{Host: "github.example.com", Path: "a/b/c", Owner: "a/b", Name: "c"}
	err := newTestProvider(t, githost.GitHub, srv.URL).Post(t.Context(), repo, testSHA, Status{State: Pending, Context: "c"})
	var perm *githost.PermanentError
	if !errors.As(err, &perm) || len(srv.requests()) != 0 {
		t.Fatalf("Post: %v, %d requests; want a PermanentError and no request", err, len(srv.requests()))
	}
}

// GitHub App: the provider exchanges a JWT signed with the App's key
// (RS256, iss = App ID) for an installation token at
// POST /api/v3/app/installations/{id}/access_tokens, posts with
// "Authorization: token <installation token>", and reuses the token for
// the next status, from a provider built anew with the same
// githost.AppTransports; without one, each provider mints its own.
func TestGitHubAppInstallationToken(t *testing.T) {
	t.Run("shared", func(t *testing.T) { testGitHubAppInstallationToken(t, &githost.AppTransports{}, 1) })
	t.Run("not shared", func(t *testing.T) { testGitHubAppInstallationToken(t, nil, 2) })
}

func testGitHubAppInstallationToken(t *testing.T, apps *githost.AppTransports, wantExchanges int) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	const appID, installationID = 1234, 5678

	srv := newAPIServerFunc(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v3/app/installations/5678/access_tokens":
			if r.Method != http.MethodPost {
				t.Errorf("token exchange method = %s, want POST", r.Method)
			}
			jwt, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok {
				t.Errorf("token exchange Authorization = %q, want Bearer <JWT>", r.Header.Get("Authorization"))
			}
			if iss := verifyRS256(t, jwt, &key.PublicKey); iss != strconv.Itoa(appID) {
				t.Errorf("JWT iss = %q, want the App ID %d", iss, appID)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(map[string]any{"token": "ghs_installation", "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		case "/api/v3/repos/octo/shop/statuses/" + testSHA:
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{}`)
		default:
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusNotFound)
		}
	})
	host := githost.Host{URL: srv.URL, Type: githost.GitHub, GitHubApp: &githost.GitHubApp{AppID: appID, InstallationID: installationID, PrivateKey: pemKey}}
	for i := range 2 {
		p, err := NewProvider(host, githost.Clients{Apps: apps})
		if err != nil {
			t.Fatalf("NewProvider: %v", err)
		}
		if err := p.Post(t.Context(), githubRepo, testSHA, Status{State: Success, Context: "c"}); err != nil {
			t.Fatalf("Post %d: %v", i, err)
		}
	}
	var exchanges, posts int
	for _, r := range srv.requests() {
		if strings.HasSuffix(r.EscapedPath, "/access_tokens") {
			exchanges++
			continue
		}
		posts++
		if a := r.Header.Get("Authorization"); a != "token ghs_installation" {
			t.Errorf("status Authorization = %q, want token ghs_installation", a)
		}
	}
	if exchanges != wantExchanges || posts != 2 {
		t.Errorf("%d token exchanges and %d posts, want %d and 2", exchanges, posts, wantExchanges)
	}
}

// A refused token exchange (the App is not installed: 404) is permanent.
func TestGitHubAppTokenExchangeRefused(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	srv := newAPIServer(t, http.StatusNotFound, nil, `{"message":"Integration not found"}`)
	p, err := NewProvider(githost.Host{URL: srv.URL, Type: githost.GitHub, GitHubApp: &githost.GitHubApp{AppID: 1, InstallationID: 2, PrivateKey: pemKey}}, githost.Clients{})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Post(t.Context(), githubRepo, testSHA, Status{State: Success, Context: "c"})
	var perm *githost.PermanentError
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), "Integration not found") {
		t.Fatalf("Post: %v (%T), want a PermanentError carrying GitHub's message", err, err)
	}
	if got := srv.only(t).EscapedPath; got != "/api/v3/app/installations/2/access_tokens" {
		t.Errorf("request path = %s, want the token exchange", got)
	}
}

// verifyRS256 checks a JWT's RS256 signature with pub and returns its iss.
func verifyRS256(t *testing.T, jwt string, pub *rsa.PublicKey) string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Errorf("JWT has %d parts, want 3", len(parts))
		return ""
	}
	var header struct{ Alg string }
	var claims struct {
		Iss      string
		Iat, Exp int64
	}
	for i, v := range []any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || json.Unmarshal(raw, v) != nil {
			t.Errorf("JWT part %d is not base64url JSON", i)
		}
	}
	if header.Alg != "RS256" {
		t.Errorf("JWT alg = %q, want RS256", header.Alg)
	}
	if claims.Exp-claims.Iat > 600 {
		t.Errorf("JWT lives %ds; GitHub refuses more than 600", claims.Exp-claims.Iat)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Errorf("JWT signature: %v", err)
		return ""
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig); err != nil {
		t.Errorf("JWT signature does not verify with the App's public key: %v", err)
	}
	return claims.Iss
}

// Shows lists the commit's statuses, 100 a page, with the token, and
// compares the newest of the context (the highest ID, whichever order the
// page lists them in; other contexts ignored) with the status as posted.
func TestGitHubShows(t *testing.T) {
	const older = `{"id":3,"context":"claimwarden/shop/web","state":"pending","description":"rollout started"}`
	const newer = `{"id":5,"context":"claimwarden/shop/web","state":"success","description":"3/3 claims compatible"}`
	const other = `{"id":9,"context":"ci/build","state":"failure","description":"3/3 claims compatible"}`
	for name, list := range map[string]string{
		"newer first": "[" + other + "," + newer + "," + older + "]",
		"older first": "[" + older + "," + other + "," + newer + "]",
	} {
		t.Run(name, func(t *testing.T) {
			srv := newJSONServer(t, func(*http.Request) (http.Header, string) { return nil, list })
			sr := reader(t, githost.GitHub, srv.URL)
			for _, tc := range []struct {
				s    Status
				want bool
			}{
				{Status{State: Success, Context: "claimwarden/shop/web", Description: "3/3 claims compatible"}, true},
				{Status{State: Pending, Context: "claimwarden/shop/web", Description: "rollout started"}, false},
				{Status{State: Success, Context: "claimwarden/shop/web", Description: "2/3 claims compatible"}, false},
				{Status{State: Failure, Context: "claimwarden/shop/web", Description: "3/3 claims compatible"}, false},
			} {
				if got, err := sr.Shows(t.Context(), githubRepo, testSHA, tc.s); err != nil || got != tc.want {
					t.Errorf("Shows(%s %q) = %v, %v; want %v", tc.s.State, tc.s.Description, got, err, tc.want)
				}
			}
			for _, r := range srv.requests() {
				assertGet(t, r, "/api/v3/repos/octo/shop/commits/"+testSHA+"/statuses", url.Values{"per_page": {"100"}})
				if a := r.Header.Get("Authorization"); a != "Bearer "+testToken {
					t.Errorf("Authorization = %q, want Bearer <token>", a)
				}
			}
		})
	}
}

// The description is compared as Post shortens it.
func TestGitHubShowsShortenedDescription(t *testing.T) {
	long := strings.Repeat("é", 200)
	body, _ := json.Marshal([]map[string]any{{"id": 1, "context": "c", "state": "error", "description": strings.Repeat("é", 139) + "…"}})
	srv := newJSONServer(t, func(*http.Request) (http.Header, string) { return nil, string(body) })
	if got, err := reader(t, githost.GitHub, srv.URL).Shows(t.Context(), githubRepo, testSHA, Status{State: Error, Context: "c", Description: long}); err != nil || !got {
		t.Errorf("Shows = %v, %v; want true", got, err)
	}
}

// No status of the context on the pages read: false. The pages follow
// GitHub's Link header, at most three of them; a context found on the
// second page ends the read there.
func TestGitHubShowsReadsAtMostThreePages(t *testing.T) {
	s := Status{State: Success, Context: "c", Description: "d"}
	pager := func(foundOn int) func(r *http.Request) (http.Header, string) {
		return func(r *http.Request) (http.Header, string) {
			page, _ := strconv.Atoi(r.URL.Query().Get("page"))
			page = max(page, 1)
			next := http.Header{"Link": {`<http://` + r.Host + r.URL.Path + `?page=` + strconv.Itoa(page+1) + `&per_page=100>; rel="next"`}}
			if page == foundOn {
				return next, `[{"id":7,"context":"c","state":"success","description":"d"}]`
			}
			return next, `[{"id":8,"context":"ci/other","state":"success","description":"d"}]`
		}
	}
	srv := newJSONServer(t, pager(0))
	if got, err := reader(t, githost.GitHub, srv.URL).Shows(t.Context(), githubRepo, testSHA, s); err != nil || got {
		t.Errorf("Shows = %v, %v; want false", got, err)
	}
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	assertGet(t, reqs[2], "/api/v3/repos/octo/shop/commits/"+testSHA+"/statuses", url.Values{"page": {"3"}, "per_page": {"100"}})

	srv = newJSONServer(t, pager(2))
	if got, err := reader(t, githost.GitHub, srv.URL).Shows(t.Context(), githubRepo, testSHA, s); err != nil || !got {
		t.Errorf("Shows = %v, %v; want true", got, err)
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}

	// A commit without statuses: one request, false.
	srv = newJSONServer(t, func(*http.Request) (http.Header, string) { return nil, `[]` })
	if got, err := reader(t, githost.GitHub, srv.URL).Shows(t.Context(), githubRepo, testSHA, s); err != nil || got {
		t.Errorf("Shows = %v, %v; want false", got, err)
	}
	srv.only(t)
}

// A 404 (no such repository, or the token cannot see it) is Post's
// permanent refusal, not "nothing shown".
func TestGitHubShowsErrors(t *testing.T) {
	testShowsErrors(t, githost.GitHub, githubRepo)
	srv := newAPIServer(t, http.StatusNotFound, nil, errorBody)
	_, err := reader(t, githost.GitHub, srv.URL).Shows(t.Context(), githubRepo, testSHA, Status{State: Success, Context: "c"})
	var perm *githost.PermanentError
	if !errors.As(err, &perm) || strings.Contains(err.Error(), testToken) {
		t.Errorf("404: %v (%T), want a PermanentError without the token", err, err)
	}
}
