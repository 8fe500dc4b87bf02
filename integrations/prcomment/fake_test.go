package prcomment

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// Fakes of the GitHub and GitLab comment APIs, for the protocol details of
// hosts that cannot run here: each keeps comments in memory, paginates as
// its host does, and records every request so that tests assert them
// exactly. (Gitea is tested against a real Gitea.)

const testToken = "tok-3f9a-SECRET"

// request is what a fake received.
type request struct {
	// Line is "METHOD escaped-path[?query]".
	Line   string
	Header http.Header
	Body   []byte
}

type recorder struct {
	mu   sync.Mutex
	reqs []request
}

func (r *recorder) record(req *http.Request) []byte {
	body, _ := io.ReadAll(req.Body)
	line := req.Method + " " + req.URL.EscapedPath()
	if req.URL.RawQuery != "" {
		line += "?" + req.URL.RawQuery
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, request{Line: line, Header: req.Header.Clone(), Body: body})
	r.mu.Unlock()
	return body
}

// take returns the requests received since the last take.
func (r *recorder) take() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

// assertLines checks the requests' method, path and query, in order.
func assertLines(t *testing.T, got []request, want ...string) {
	t.Helper()
	var lines []string
	for _, r := range got {
		lines = append(lines, r.Line)
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("requests:\n  %s\nwant:\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
}

// assertJSON checks a request's JSON body exactly, and its Content-Type.
func assertJSON(t *testing.T, r request, want map[string]any) {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type = %q, want application/json", r.Line, ct)
	}
	var got map[string]any
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("%s: body %q is not a JSON object: %v", r.Line, r.Body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: body = %.300s\nwant %.300v", r.Line, r.Body, want)
	}
}

// assertHeader checks one header on every request.
func assertHeader(t *testing.T, reqs []request, name, want string) {
	t.Helper()
	for _, r := range reqs {
		if got := r.Header.Get(name); got != want {
			t.Errorf("%s: %s = %q, want %q", r.Line, name, got, want)
		}
	}
}

// fakeComment is a comment as a fake stores it.
type fakeComment struct {
	ID, UserID, AppID int64
	Body              string
	System            bool // GitLab system note
}

// store is a fake's comments of one pull request.
type store struct {
	mu       sync.Mutex
	comments []fakeComment
	nextID   int64
}

func (s *store) add(c fakeComment) fakeComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	c.ID = s.nextID
	s.comments = append(s.comments, c)
	return c
}

func (s *store) edit(id int64, body string) (fakeComment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.comments {
		if s.comments[i].ID == id {
			s.comments[i].Body = body
			return s.comments[i], true
		}
	}
	return fakeComment{}, false
}

// page returns page p (from 1) of n comments each, and whether more follow.
func (s *store) page(p, n int) ([]fakeComment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := min((p-1)*n, len(s.comments))
	end := min(start+n, len(s.comments))
	return append([]fakeComment(nil), s.comments[start:end]...), end < len(s.comments)
}

func (s *store) all() []fakeComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]fakeComment(nil), s.comments...)
}

// others fills s with n comments by user 99, none with a marker.
func (s *store) others(n int) {
	for range n {
		s.add(fakeComment{UserID: 99, Body: "LGTM"})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
