package commitstatus

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// Shared by the provider tests: a fake Git host API that records every
// request and answers with a canned response.

const (
	testSHA   = "0123456789abcdef0123456789abcdef01234567"
	testToken = "tok-3f9a-SECRET"
)

// capturedRequest is what a fake API received.
type capturedRequest struct {
	Method string
	// EscapedPath is the path as sent on the wire: GitLab's project ID
	// must arrive as group%2Fsub%2Fname, not decoded.
	EscapedPath string
	// Query is the decoded query string.
	Query  url.Values
	Header http.Header
	Body   []byte
}

type apiServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []capturedRequest
}

// newAPIServer answers every request with code, header and body.
func newAPIServer(t *testing.T, code int, header http.Header, body string) *apiServer {
	t.Helper()
	return newAPIServerFunc(t, func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header()[k] = v
		}
		if body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	})
}

// newAPIServerFunc records each request, then lets handle answer it.
func newAPIServerFunc(t *testing.T, handle http.HandlerFunc) *apiServer {
	t.Helper()
	s := &apiServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, capturedRequest{Method: r.Method, EscapedPath: r.URL.EscapedPath(), Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		handle(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) requests() []capturedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]capturedRequest(nil), s.reqs...)
}

// only returns the one request the server received, failing otherwise
// (a provider that made an extra request, e.g. a version probe, fails).
func (s *apiServer) only(t *testing.T) capturedRequest {
	t.Helper()
	reqs := s.requests()
	if len(reqs) != 1 {
		var seen []string
		for _, r := range reqs {
			seen = append(seen, r.Method+" "+r.EscapedPath)
		}
		t.Fatalf("server got %d requests, want 1: %v", len(reqs), seen)
	}
	return reqs[0]
}

// assertRequest checks method, escaped path and the JSON body, exactly:
// every field the API documents that the provider should send, and no other.
func assertRequest(t *testing.T, got capturedRequest, method, path string, body map[string]any) {
	t.Helper()
	if got.Method != method {
		t.Errorf("method = %s, want %s", got.Method, method)
	}
	if got.EscapedPath != path {
		t.Errorf("path = %s, want %s", got.EscapedPath, path)
	}
	if ct := got.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var decoded map[string]any
	if err := json.Unmarshal(got.Body, &decoded); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", got.Body, err)
	}
	if !reflect.DeepEqual(decoded, body) {
		t.Errorf("body = %s\nwant   %v", got.Body, body)
	}
}

// redirectTransport sends every request to target while recording the URL
// it was meant for: it shows which API origin a provider for a public host
// (github.com, bitbucket.org) talks to, without the network.
type redirectTransport struct {
	target *url.URL
	mu     sync.Mutex
	urls   []string
}

func (rt *redirectTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	rt.urls = append(rt.urls, r.URL.String())
	rt.mu.Unlock()
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = rt.target.Scheme, rt.target.Host, ""
	return http.DefaultTransport.RoundTrip(r)
}

func redirectingClient(t *testing.T, srv *apiServer) (*http.Client, *redirectTransport) {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rt := &redirectTransport{target: u}
	return &http.Client{Transport: rt, Timeout: 10 * time.Second}, rt
}

// newTestProvider builds a provider of type typ for a fake API at base.
func newTestProvider(t *testing.T, typ githost.HostType, base string) Provider {
	t.Helper()
	p, err := NewProvider(githost.Host{URL: base, Type: typ, Token: testToken}, githost.Clients{})
	if err != nil {
		t.Fatalf("NewProvider: %v", err)
	}
	return p
}

// errorBody is an error answer every provider's parser reads a message
// from (GitHub/GitLab/Gitea "message", Bitbucket Cloud "error.message",
// Bitbucket Server "errors[].message"); it echoes the token, as some hosts
// echo a request, to show that the token is scrubbed.
const errorBody = `{"message":"refused for ` + testToken + `","error":{"message":"refused for ` + testToken + `"},"errors":[{"message":"refused for ` + testToken + `"}]}`

// testErrorClassification runs every provider through the same refusals and
// checks the error type the Reporter will act on. Each case gets a fresh
// server and provider: go-github remembers a rate limit and would answer
// the next case without a request.
func testErrorClassification(t *testing.T, typ githost.HostType, repo githost.Repository) {
	t.Helper()
	reset := time.Now().Add(60 * time.Second).Unix()
	cases := []struct {
		name   string
		code   int
		header http.Header
		// want: "ratelimit", "permanent" or "retry"
		want             string
		minWait, maxWait time.Duration
	}{
		{"429 Retry-After seconds", 429, http.Header{"Retry-After": {"7"}}, "ratelimit", 7 * time.Second, 7 * time.Second},
		{"403 rate limit exhausted", 403, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {itoa(reset)}}, "ratelimit", 50 * time.Second, 60 * time.Second},
		{"401 bad token", 401, nil, "permanent", 0, 0},
		{"403 forbidden", 403, http.Header{"X-Ratelimit-Remaining": {"4999"}}, "permanent", 0, 0},
		{"404 no repository", 404, nil, "permanent", 0, 0},
		{"422 invalid", 422, nil, "permanent", 0, 0},
		{"500 server error", 500, nil, "retry", 0, 0},
		{"503 unavailable", 503, nil, "retry", 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newAPIServer(t, tc.code, tc.header, errorBody)
			err := newTestProvider(t, typ, srv.URL).Post(t.Context(), repo, testSHA, Status{State: Pending, Context: "ci/x", Description: "d"})
			if err == nil {
				t.Fatal("Post succeeded on an error answer")
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error message holds the token: %v", err)
			}
			var rl *githost.RateLimitError
			var perm *githost.PermanentError
			isRL, isPerm := errors.As(err, &rl), errors.As(err, &perm)
			switch tc.want {
			case "ratelimit":
				if !isRL || isPerm {
					t.Fatalf("error %v (%T) is not (only) a *RateLimitError", err, err)
				}
				if rl.RetryAfter < tc.minWait || rl.RetryAfter > tc.maxWait {
					t.Errorf("RetryAfter = %v, want in [%v, %v]", rl.RetryAfter, tc.minWait, tc.maxWait)
				}
			case "permanent":
				if !isPerm || isRL {
					t.Fatalf("error %v (%T) is not (only) a *PermanentError", err, err)
				}
				// The host's message reaches the error, scrubbed: this is
				// what a user reads to fix a token or a repository.
				// (client-go turns GitLab's 404 into ErrNotFound without
				// reading the body: there is no message to carry.)
				if !(typ == githost.GitLab && tc.code == 404) && !strings.Contains(err.Error(), "refused for xxxxx") {
					t.Errorf("error %q does not carry the host's scrubbed message", err)
				}
			case "retry":
				if isRL || isPerm {
					t.Fatalf("error %v (%T) should be retryable, neither rate limit nor permanent", err, err)
				}
			}
		})
	}
	t.Run("no answer", func(t *testing.T) {
		srv := newAPIServer(t, 200, nil, "")
		base := srv.URL
		srv.Close() // connection refused
		err := newTestProvider(t, typ, base).Post(t.Context(), repo, testSHA, Status{State: Pending, Context: "ci/x"})
		var rl *githost.RateLimitError
		var perm *githost.PermanentError
		if err == nil || errors.As(err, &rl) || errors.As(err, &perm) {
			t.Fatalf("unreachable host: error %v (%T), want a plain retryable error", err, err)
		}
	})
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// assertRequestBody decodes a request's JSON body into v.
func assertRequestBody(t *testing.T, r capturedRequest, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("body %q: %v", r.Body, err)
	}
}

// newJSONServer answers each request with 200 and the JSON answer gives
// (with its headers, if any).
func newJSONServer(t *testing.T, answer func(r *http.Request) (http.Header, string)) *apiServer {
	t.Helper()
	return newAPIServerFunc(t, func(w http.ResponseWriter, r *http.Request) {
		header, body := answer(r)
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
	})
}

// assertGet checks that a read is a GET of path with exactly query.
func assertGet(t *testing.T, got capturedRequest, path string, query url.Values) {
	t.Helper()
	if got.Method != http.MethodGet {
		t.Errorf("method = %s, want GET", got.Method)
	}
	if got.EscapedPath != path {
		t.Errorf("path = %s, want %s", got.EscapedPath, path)
	}
	if len(got.Query) != 0 || len(query) != 0 {
		if !reflect.DeepEqual(got.Query, query) {
			t.Errorf("query = %v, want %v", got.Query, query)
		}
	}
}

// reader returns the provider of type typ for a fake API at base as the
// StatusReader every provider is.
func reader(t *testing.T, typ githost.HostType, base string) StatusReader {
	t.Helper()
	sr, ok := newTestProvider(t, typ, base).(StatusReader)
	if !ok {
		t.Fatalf("the %s provider is not a StatusReader", typ)
	}
	return sr
}

// testShowsErrors runs a provider's Shows through the refusals of
// testErrorClassification: its errors are classified as Post's are (the
// Reporter logs them and posts), and never carry the token. A 404 is left
// to each provider's tests: Bitbucket's answer it for "no such status".
func testShowsErrors(t *testing.T, typ githost.HostType, repo githost.Repository) {
	t.Helper()
	s := Status{State: Pending, Context: "ci/x", Description: "d"}
	for _, tc := range []struct {
		name   string
		code   int
		header http.Header
	}{
		{"429 Retry-After", 429, http.Header{"Retry-After": {"7"}}},
		{"401 bad token", 401, nil},
		{"500 server error", 500, nil},
		{"503 Retry-After", 503, http.Header{"Retry-After": {"30"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newAPIServer(t, tc.code, tc.header, errorBody)
			shown, err := reader(t, typ, srv.URL).Shows(t.Context(), repo, testSHA, s)
			if err == nil || shown {
				t.Fatalf("Shows = %v, %v on an error answer, want an error", shown, err)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error message holds the token: %v", err)
			}
			postErr := newTestProvider(t, typ, newAPIServer(t, tc.code, tc.header, errorBody).URL).Post(t.Context(), repo, testSHA, s)
			if got, want := errorKind(err), errorKind(postErr); got != want {
				t.Errorf("Shows error %v is %s, Post's (%v) %s", err, got, postErr, want)
			}
		})
	}
}

// errorKind is how the Reporter would treat err.
func errorKind(err error) string {
	var rl *githost.RateLimitError
	var un *githost.UnavailableError
	var perm *githost.PermanentError
	switch {
	case errors.As(err, &rl):
		return "rate limit"
	case errors.As(err, &un):
		return "unavailable"
	case errors.As(err, &perm):
		return "permanent"
	}
	return "retry"
}
