package githost

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A GET answered with an ETag is asked again with If-None-Match, and the
// host's 304 reaches the caller as the kept 200 (marked, with the 304's
// rate-limit headers); an answer that changed replaces the kept one.
// Another credential's request is not conditional on the first's answer
// (it may not see it), nor is a POST, nor a GET whose answer is larger
// than a kept one may be.
func TestConditionalRequests(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	body := map[string]string{"/pulls": `[{"number":1}]`, "/big": strings.Repeat("x", conditionalEntryBytes+1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, fmt.Sprintf("%s %s %s if-none-match=%q", r.Header.Get("Authorization"), r.Method, r.URL.Path, r.Header.Get("If-None-Match")))
		b := body[r.URL.Path]
		etag := fmt.Sprintf(`W/"%d-%d"`, len(b), strings.Count(b, "number"))
		w.Header().Set("ETag", etag)
		w.Header().Set("X-RateLimit-Remaining", fmt.Sprint(4000-len(asked)))
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = io.WriteString(w, b)
	}))
	defer srv.Close()
	c := Clients{Conditional: NewConditional()}
	do := func(token, method, path string) (string, *http.Response) {
		t.Helper()
		_, hc, err := c.Client(Host{URL: srv.URL, Type: GitHub, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b), resp
	}
	last := func() string {
		mu.Lock()
		defer mu.Unlock()
		return asked[len(asked)-1]
	}

	if got, resp := do("a", "GET", "/pulls"); got != body["/pulls"] || resp.Header.Get(FromCacheHeader) != "" || last() != `a GET /pulls if-none-match=""` {
		t.Fatalf("first GET: %q %v, sent %s", got, resp.Header, last())
	}
	got, resp := do("a", "GET", "/pulls")
	if got != body["/pulls"] || resp.StatusCode != http.StatusOK || resp.Header.Get(FromCacheHeader) != "1" || resp.Header.Get("X-RateLimit-Remaining") != "3998" ||
		last() != `a GET /pulls if-none-match="W/\"14-1\""` {
		t.Errorf("unchanged: %d %q %v, sent %s; want the kept body from a 304, with its headers", resp.StatusCode, got, resp.Header, last())
	}
	if _, _ = do("b", "GET", "/pulls"); last() != `b GET /pulls if-none-match=""` {
		t.Errorf("another credential sent %s; want no If-None-Match", last())
	}
	if _, _ = do("a", "POST", "/pulls"); last() != `a POST /pulls if-none-match=""` {
		t.Errorf("a POST sent %s; want no If-None-Match", last())
	}

	mu.Lock()
	body["/pulls"] = `[{"number":1},{"number":2}]`
	mu.Unlock()
	if got, resp := do("a", "GET", "/pulls"); got != body["/pulls"] || resp.Header.Get(FromCacheHeader) != "" {
		t.Errorf("changed: %q %v; want the new body", got, resp.Header)
	}
	if _, resp := do("a", "GET", "/pulls"); resp.Header.Get(FromCacheHeader) != "1" || last() != `a GET /pulls if-none-match="W/\"27-2\""` {
		t.Errorf("unchanged again: sent %s; want the new answer's ETag", last())
	}

	for range 2 {
		if got, _ := do("a", "GET", "/big"); got != body["/big"] || last() != `a GET /big if-none-match=""` {
			t.Errorf("a large answer: %d bytes, sent %s; want it whole, and not kept", len(got), last())
		}
	}
}

// What is kept is bounded in bytes: the oldest answers go first.
func TestConditionalIsBounded(t *testing.T) {
	c := NewConditional()
	for i := range 12 {
		c.put(fmt.Sprint(i), &kept{etag: "e", body: make([]byte, 3<<20)})
	}
	if c.bytes > conditionalBytes || c.entries.Len() != 10 || c.get("0") != nil || c.get("11") == nil {
		t.Errorf("kept %d answers of %d bytes; want the newest 10, at most %d bytes", c.entries.Len(), c.bytes, conditionalBytes)
	}
	c.put("11", &kept{etag: "f", body: make([]byte, 1)})
	if c.bytes != 9*(3<<20)+1 {
		t.Errorf("after replacing one: %d bytes kept, want %d", c.bytes, 9*(3<<20)+1)
	}
}
