package prcomment

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// A merge request of a subgroup project on an instance under /gitlab: the
// project is named by its URL-encoded path inside the instance, notes are
// read oldest first over both pages, the note is created once and then
// edited; system notes are skipped even when they quote the marker.
func TestGitLabCreateThenEdit(t *testing.T) {
	f := newGitLabFake(t)
	f.others(60)
	// GitLab writes system notes itself, e.g. when a commit is pushed.
	f.add(fakeComment{UserID: 7, System: true, Body: "added 1 commit " + Marker("prod")})
	f.others(60)
	repo, err := githost.ParseRepositoryURL(f.URL + "/gitlab/group/sub/shop.git")
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(githost.Host{URL: f.URL + "/gitlab/", Type: githost.GitLab, Token: testToken}, githost.Clients{})
	if err != nil {
		t.Fatal(err)
	}
	list1 := "GET " + gitlabNotes + "?order_by=created_at&per_page=100&sort=asc"
	list2 := "GET " + gitlabNotes + "?order_by=created_at&page=2&per_page=100&sort=asc"

	url, err := c.Upsert(t.Context(), repo, 5, "prod", "first report")
	if err != nil {
		t.Fatalf("first Upsert: %v", err)
	}
	reqs := f.rec.take()
	// The system note is not ours to edit, nor a reason to look up who
	// the token is.
	assertLines(t, reqs, list1, list2, "POST "+gitlabNotes)
	assertJSON(t, reqs[2], map[string]any{"body": Marker("prod") + "\nfirst report"})
	assertHeader(t, reqs, "Private-Token", testToken)
	if want := f.URL + "/gitlab/group/sub/shop/-/merge_requests/5#note_122"; url != want {
		t.Errorf("URL = %q, want %q", url, want)
	}

	if _, err := c.Upsert(t.Context(), repo, 5, "prod", "second report"); err != nil {
		t.Fatalf("second Upsert: %v", err)
	}
	reqs = f.rec.take()
	assertLines(t, reqs, list1, list2, "GET /gitlab/api/v4/user", "PUT "+gitlabNotes+"/122")
	assertJSON(t, reqs[3], map[string]any{"body": Marker("prod") + "\nsecond report"})
	assertHeader(t, reqs, "Private-Token", testToken)

	if n := markedBy(f.all(), "prod"); n != 2 { // ours and the system note
		t.Errorf("%d notes carry the marker, want 2 (ours and the system note)", n)
	}
	if got := f.all()[121].Body; got != Marker("prod")+"\nsecond report" {
		t.Errorf("note 122 = %q", got)
	}
}

// A refusal names the merge request and stays permanent; GitLab's 404
// (which client-go reports without its body) says what may be wrong.
func TestGitLabErrors(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Project Not Found"})
	}))
	c, err := New(githost.Host{URL: srv.URL, Type: githost.GitLab, Token: testToken}, githost.Clients{})
	if err != nil {
		t.Fatal(err)
	}
	repo := githost.Repository{Host: "gitlab.example.com", Path: "group/sub/shop", Owner: "group/sub", Name: "shop"}
	_, err = c.Upsert(t.Context(), repo, 5, "prod", "x")
	var perm *githost.PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("Upsert: %v (%T), want a *githost.PermanentError", err, err)
	}
	want := `comment "prod" on merge request gitlab.example.com/group/sub/shop!5: gitlab: GET projects/group%2Fsub%2Fshop/merge_requests/5/notes (page 1): 404 Not Found: no such project or object, or the token cannot see it`
	if err.Error() != want || strings.Contains(err.Error(), testToken) {
		t.Errorf("error\n  %s\nwant\n  %s", err, want)
	}
}
