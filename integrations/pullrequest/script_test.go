package pullrequest_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/pullrequest"
)

// exchange is one request a fake host expects, in order, and its answer.
type exchange struct {
	method string
	path   string // as sent, escaped
	query  string // compared as url.Values; "" means none
	// check makes further assertions on the request (may be nil).
	check  func(t *testing.T, r *http.Request, body []byte)
	status int
	header map[string]string
	body   string
}

// script is a fake Git host that answers exactly the exchanges it was
// given, in order, each carrying the auth header; anything else fails the
// test, and so does an exchange left unmade.
type script struct {
	t          *testing.T
	authHeader string
	authValue  string
	mu         sync.Mutex
	want       []exchange
	next       int
	URL        string
}

func serve(t *testing.T, authHeader, authValue string, want ...exchange) *script {
	t.Helper()
	s := &script{t: t, authHeader: authHeader, authValue: authValue, want: want}
	srv := httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.next < len(s.want) {
			t.Errorf("%d of %d requests made; next expected: %s %s", s.next, len(s.want), s.want[s.next].method, s.want[s.next].path)
		}
	})
	s.URL = srv.URL
	return s
}

func (s *script) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.t
	body, _ := io.ReadAll(r.Body)
	got := r.Method + " " + r.URL.EscapedPath() + "?" + r.URL.RawQuery
	if s.next >= len(s.want) {
		t.Errorf("unexpected request %s", got)
		http.Error(w, "unexpected", http.StatusInternalServerError)
		return
	}
	e := s.want[s.next]
	s.next++
	if r.Method != e.method || r.URL.EscapedPath() != e.path {
		t.Errorf("request %d: %s, want %s %s", s.next, got, e.method, e.path)
	}
	wantQuery, err := url.ParseQuery(e.query)
	if err != nil {
		t.Fatal(err)
	}
	if q := r.URL.Query(); q.Encode() != wantQuery.Encode() {
		t.Errorf("request %d %s: query %q, want %q", s.next, e.path, q.Encode(), wantQuery.Encode())
	}
	if v := r.Header.Get(s.authHeader); v != s.authValue {
		t.Errorf("request %d %s: %s %q, want %q", s.next, e.path, s.authHeader, v, s.authValue)
	}
	if e.check != nil {
		e.check(t, r, body)
	}
	for k, v := range e.header {
		w.Header().Set(k, v)
	}
	if e.header["Content-Type"] == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(e.status)
	_, _ = io.WriteString(w, e.body)
}

// jsonFields checks that a JSON body has (at least) the fields want, as
// JSON decodes them.
func jsonFields(want map[string]any) func(*testing.T, *http.Request, []byte) {
	return func(t *testing.T, r *http.Request, body []byte) {
		t.Helper()
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Errorf("%s %s: body %q is not JSON: %v", r.Method, r.URL.Path, body, err)
			return
		}
		wantJSON, _ := json.Marshal(want)
		var w map[string]any
		_ = json.Unmarshal(wantJSON, &w)
		for k, v := range w {
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s %s: %s = %#v, want %#v", r.Method, r.URL.Path, k, got[k], v)
			}
		}
	}
}

// noSecret checks that err names op and never the token.
func noSecret(t *testing.T, err error, token string, names ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error, want the host's refusal")
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("error %q holds the token", err)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not name %q", err, n)
		}
	}
}

const (
	prKey    = "autoresize/shop/web"
	prBranch = "claimwarden/autoresize/shop/web"
)

// change proposes two files, one the base has (web.yaml) and one it does
// not (web-pdb.yaml), to main.
func change(owner string) pullrequest.Change {
	return pullrequest.Change{
		Owner: owner, Repo: "shop", Base: "main", Key: prKey,
		Files: []pullrequest.File{
			{Path: "apps/web.yaml", Content: []byte("storage: 20Gi\n")},
			{Path: "apps/web-pdb.yaml", Content: []byte("kind: PodDisruptionBudget\n")},
		},
		Title: "Grow shop/web data to 20Gi", Body: "data-web-0 is 91% full.", Message: "web: data 20Gi",
	}
}

func testKey(t *testing.T) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}
