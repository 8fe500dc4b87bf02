package prcomment

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// gitlabFake serves GitLab's API for merge request !5 of group/sub/shop,
// on an instance under the sub-path /gitlab.
type gitlabFake struct {
	URL string
	rec recorder
	store
	selfID int64
}

const gitlabNotes = "/gitlab/api/v4/projects/group%2Fsub%2Fshop/merge_requests/5/notes"

func newGitLabFake(t *testing.T) *gitlabFake {
	f := &gitlabFake{selfID: 7}
	srv := newServer(t, http.HandlerFunc(f.serve))
	f.URL = srv.URL
	return f
}

func (f *gitlabFake) serve(w http.ResponseWriter, r *http.Request) {
	body := f.rec.record(r)
	path := r.URL.EscapedPath()
	switch {
	case r.Method == http.MethodGet && path == gitlabNotes:
		q := r.URL.Query()
		if q.Get("order_by") != "created_at" || q.Get("sort") != "asc" {
			// GitLab's default is the newest first.
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "fake serves oldest first only"})
			return
		}
		p, _ := strconv.Atoi(q.Get("page"))
		n, _ := strconv.Atoi(q.Get("per_page"))
		p, n = max(p, 1), cmp.Or(n, 20)
		page, more := f.page(p, n)
		w.Header().Set("X-Page", strconv.Itoa(p))
		w.Header().Set("X-Per-Page", strconv.Itoa(n))
		if more {
			w.Header().Set("X-Next-Page", strconv.Itoa(p+1))
		} else {
			w.Header().Set("X-Next-Page", "")
		}
		out := []map[string]any{}
		for _, c := range page {
			out = append(out, gitlabNote(c))
		}
		writeJSON(w, http.StatusOK, out)
	case r.Method == http.MethodPost && path == gitlabNotes:
		var in struct{ Body string }
		_ = json.Unmarshal(body, &in)
		writeJSON(w, http.StatusCreated, gitlabNote(f.add(fakeComment{UserID: f.selfID, Body: in.Body})))
	case r.Method == http.MethodPut && strings.HasPrefix(path, gitlabNotes+"/"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(path, gitlabNotes+"/"), 10, 64)
		var in struct{ Body string }
		_ = json.Unmarshal(body, &in)
		c, ok := f.edit(id, in.Body)
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Not found"})
			return
		}
		writeJSON(w, http.StatusOK, gitlabNote(c))
	case r.Method == http.MethodGet && path == "/gitlab/api/v4/user":
		writeJSON(w, http.StatusOK, map[string]any{"id": f.selfID, "username": "project_9_bot"})
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Not found"})
	}
}

func gitlabNote(c fakeComment) map[string]any {
	return map[string]any{
		"id":            c.ID,
		"body":          c.Body,
		"author":        map[string]any{"id": c.UserID},
		"system":        c.System,
		"noteable_type": "MergeRequest",
		"noteable_iid":  5,
	}
}
