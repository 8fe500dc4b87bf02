package githost

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// seenRequest is what a test server saw of a request.
type seenRequest struct {
	method, uri, body string
	header            http.Header
}

// bitbucketServer answers every request with code and body; last returns
// the last request seen.
func bitbucketServer(t *testing.T, code int, body string) (srv *httptest.Server, last func() seenRequest) {
	var mu sync.Mutex
	var seen seenRequest
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = seenRequest{method: r.Method, uri: r.URL.RequestURI(), body: string(b), header: r.Header.Clone()}
		mu.Unlock()
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

func TestClientsBitbucket(t *testing.T) {
	for _, tc := range []struct {
		host Host
		api  string
	}{
		{Host{URL: "https://bitbucket.org/", Type: BitbucketCloud, Token: "t"}, "https://api.bitbucket.org"},
		{Host{URL: "https://bb.example.com/proxy/", Type: BitbucketCloud, Token: "t"}, "https://bb.example.com/proxy"},
		{Host{URL: "https://bitbucket.example.com/context/", Type: BitbucketServer, Token: "t"}, "https://bitbucket.example.com/context"},
	} {
		b, err := Clients{}.Bitbucket(tc.host)
		if err != nil || b.API != tc.api || b.Type != tc.host.Type || b.Token != "t" || b.HTTP == nil {
			t.Errorf("Bitbucket(%s) = %+v, %v; want API %s", tc.host.URL, b, err, tc.api)
		}
	}
	if _, err := (Clients{}).Bitbucket(Host{URL: "https://git.example.com", Type: GitHub, Token: "t"}); err == nil || !strings.Contains(err.Error(), `type "github" is not "bitbucket-cloud" or "bitbucket-server"`) {
		t.Errorf("a GitHub host: %v, want a refusal naming both Bitbucket types", err)
	}
}

// Call sends the token as a bearer token and JSON, decodes a 2xx answer,
// hands back an accepted code undecoded, and classifies the rest as every
// host's errors are, with the host's words and no token.
func TestBitbucketCall(t *testing.T) {
	t.Run("JSON in and out", func(t *testing.T) {
		srv, last := bitbucketServer(t, http.StatusOK, `{"name":"main"}`)
		b := Bitbucket{Type: BitbucketServer, API: srv.URL, Token: testToken}
		var out struct{ Name string }
		code, err := b.CallJSON(t.Context(), http.MethodPost, "/rest/api/1.0/x?at=1", map[string]string{"a": "b"}, &out)
		if err != nil || code != http.StatusOK || out.Name != "main" {
			t.Fatalf("CallJSON = %d, %v, %+v", code, err, out)
		}
		r := last()
		if r.method != http.MethodPost || r.uri != "/rest/api/1.0/x?at=1" || r.body != `{"a":"b"}` ||
			r.header.Get("Authorization") != "Bearer "+testToken || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("request %+v", r)
		}
	})
	t.Run("accepted code", func(t *testing.T) {
		srv, _ := bitbucketServer(t, http.StatusNotFound, `not json`)
		b := Bitbucket{Type: BitbucketCloud, API: srv.URL, Token: testToken}
		var out struct{}
		if code, err := b.Call(t.Context(), http.MethodGet, "/2.0/x", "", nil, &out, http.StatusNotFound); err != nil || code != http.StatusNotFound {
			t.Errorf("Call = %d, %v; want 404 without error", code, err)
		}
	})
	for _, tc := range []struct {
		name, body string
		typ        HostType
		code       int
		kind       any
		want       string
	}{
		{"cloud refusal", `{"type":"error","error":{"message":"Forbidden","detail":"token ` + testToken + ` lacks scope"}}`, BitbucketCloud, http.StatusForbidden,
			new(*PermanentError), "bitbucket-cloud: GET /2.0/x: 403 Forbidden: Forbidden: token xxxxx lacks scope"},
		{"server refusal", `{"errors":[{"message":"one"},{"message":"two"}]}`, BitbucketServer, http.StatusConflict,
			new(*PermanentError), "bitbucket-server: GET /2.0/x: 409 Conflict: one; two"},
		{"rate limit", `{}`, BitbucketCloud, http.StatusTooManyRequests, new(*RateLimitError), "429 Too Many Requests"},
		{"undecodable 2xx", `<html>`, BitbucketServer, http.StatusOK, nil, "200 OK, but the answer could not be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := bitbucketServer(t, tc.code, tc.body)
			b := Bitbucket{Type: tc.typ, API: srv.URL, Token: testToken}
			var out struct{}
			_, err := b.Call(t.Context(), http.MethodGet, "/2.0/x", "", nil, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), testToken) {
				t.Fatalf("error %v, want one containing %q and no token", err, tc.want)
			}
			if tc.kind != nil && !errors.As(err, tc.kind) {
				t.Errorf("error %v (%T), want %T", err, err, tc.kind)
			}
			var perm *PermanentError
			var limited *RateLimitError
			if tc.kind == nil && (errors.As(err, &perm) || errors.As(err, &limited)) {
				t.Errorf("error %v (%T), want a plain retryable one", err, err)
			}
		})
	}
	t.Run("larger than read", func(t *testing.T) {
		srv, _ := bitbucketServer(t, http.StatusOK, fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", MaxAnswerBytes)))
		b := Bitbucket{Type: BitbucketCloud, API: srv.URL, Token: testToken}
		var out struct{}
		if _, err := b.Call(t.Context(), http.MethodGet, "/2.0/x", "", nil, &out); !errors.Is(err, ErrTooLarge) {
			t.Errorf("error %v, want ErrTooLarge", err)
		}
	})
}
