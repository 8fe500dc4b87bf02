package prcomment

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// githubFake serves GitHub Enterprise's API under /api/v3 for pull request
// octo/shop#12.
type githubFake struct {
	URL string
	rec recorder
	store
	// selfID is the user GET /user answers; 0 answers 403 as GitHub does to
	// an installation token.
	selfID int64
	// postAs is who a created comment is by.
	postAs fakeComment
	// fail, when set, answers every request with this code.
	fail int
}

func newGitHubFake(t *testing.T) *githubFake {
	f := &githubFake{selfID: 7, postAs: fakeComment{UserID: 7}}
	srv := newServer(t, http.HandlerFunc(f.serve))
	f.URL = srv.URL
	return f
}

const githubComments = "/api/v3/repos/octo/shop/issues/12/comments"

func (f *githubFake) serve(w http.ResponseWriter, r *http.Request) {
	body := f.rec.record(r)
	if f.fail != 0 {
		writeJSON(w, f.fail, map[string]any{"message": "refused for " + testToken})
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && path == githubComments:
		p, _ := strconv.Atoi(r.URL.Query().Get("page"))
		n, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		p, n = max(p, 1), cmp.Or(n, 30)
		page, more := f.page(p, n)
		if more {
			next := fmt.Sprintf("%s%s?page=%d&per_page=%d", f.URL, githubComments, p+1, n)
			w.Header().Set("Link", `<`+next+`>; rel="next"`)
		}
		out := []map[string]any{}
		for _, c := range page {
			out = append(out, f.json(c))
		}
		writeJSON(w, http.StatusOK, out)
	case r.Method == http.MethodPost && path == githubComments:
		var in struct{ Body string }
		_ = json.Unmarshal(body, &in)
		c := f.postAs
		c.Body = in.Body
		writeJSON(w, http.StatusCreated, f.json(f.add(c)))
	case r.Method == http.MethodPatch && strings.HasPrefix(path, "/api/v3/repos/octo/shop/issues/comments/"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(path, "/api/v3/repos/octo/shop/issues/comments/"), 10, 64)
		var in struct{ Body string }
		_ = json.Unmarshal(body, &in)
		c, ok := f.edit(id, in.Body)
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
			return
		}
		writeJSON(w, http.StatusOK, f.json(c))
	case r.Method == http.MethodGet && path == "/api/v3/user":
		if f.selfID == 0 {
			writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": f.selfID, "login": "claimwarden-bot"})
	case r.Method == http.MethodPost && path == "/api/v3/app/installations/8/access_tokens":
		writeJSON(w, http.StatusCreated, map[string]any{"token": "ghs_installation", "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	}
}

func (f *githubFake) json(c fakeComment) map[string]any {
	m := map[string]any{
		"id":       c.ID,
		"body":     c.Body,
		"user":     map[string]any{"id": c.UserID},
		"html_url": fmt.Sprintf("https://github.example.com/octo/shop/pull/12#issuecomment-%d", c.ID),
	}
	if c.AppID != 0 {
		m["performed_via_github_app"] = map[string]any{"id": c.AppID}
	}
	return m
}
