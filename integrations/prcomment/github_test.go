package prcomment

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

var githubRepo = githost.Repository{Host: "github.example.com", Path: "octo/shop", Owner: "octo", Name: "shop"}

func newGitHubCommenter(t *testing.T, f *githubFake) Commenter {
	t.Helper()
	c, err := New(githost.Host{URL: f.URL, Type: githost.GitHub, Token: testToken}, githost.Clients{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// The first run creates the comment, after reading both pages of the
// pull request's 150 comments; the second edits it (it is on page 2 now),
// after asking who the token is; a third with the same body sends nothing.
func TestGitHubCreateThenEdit(t *testing.T) {
	f := newGitHubFake(t)
	f.others(150)
	c := newGitHubCommenter(t, f)
	list1 := "GET " + githubComments + "?per_page=100"
	list2 := "GET " + githubComments + "?page=2&per_page=100"

	url, err := c.Upsert(t.Context(), githubRepo, 12, "prod", "## claimwarden check\nall allowed\n")
	if err != nil {
		t.Fatalf("first Upsert: %v", err)
	}
	reqs := f.rec.take()
	assertLines(t, reqs, list1, list2, "POST "+githubComments)
	assertJSON(t, reqs[2], map[string]any{"body": "<!-- claimwarden:check prod -->\n## claimwarden check\nall allowed\n"})
	assertHeader(t, reqs, "Authorization", "Bearer "+testToken)
	assertHeader(t, reqs, "X-GitHub-Api-Version", "2022-11-28")
	if want := "https://github.example.com/octo/shop/pull/12#issuecomment-151"; url != want {
		t.Errorf("URL = %q, want %q", url, want)
	}

	url, err = c.Upsert(t.Context(), githubRepo, 12, "prod", "## claimwarden check\nweb-0 denied\n")
	if err != nil {
		t.Fatalf("second Upsert: %v", err)
	}
	reqs = f.rec.take()
	assertLines(t, reqs, list1, list2, "GET /api/v3/user", "PATCH /api/v3/repos/octo/shop/issues/comments/151")
	assertJSON(t, reqs[3], map[string]any{"body": "<!-- claimwarden:check prod -->\n## claimwarden check\nweb-0 denied\n"})
	assertHeader(t, reqs, "Authorization", "Bearer "+testToken)
	if want := "https://github.example.com/octo/shop/pull/12#issuecomment-151"; url != want {
		t.Errorf("URL = %q, want %q", url, want)
	}

	// Unchanged: no edit (no "edited" mark, no notification), and the
	// identity is not asked again.
	if _, err := c.Upsert(t.Context(), githubRepo, 12, "prod", "## claimwarden check\nweb-0 denied\n"); err != nil {
		t.Fatalf("third Upsert: %v", err)
	}
	assertLines(t, f.rec.take(), list1, list2)

	if n := markedBy(f.all(), "prod"); n != 1 {
		t.Errorf("%d comments carry the marker, want 1", n)
	}
}

// A key tells checks apart: "prod" does not edit the "prod-eu" comment,
// and another user's comment with the marker (quoting ours) is left alone.
func TestGitHubEditsOnlyOwnCommentOfItsKey(t *testing.T) {
	f := newGitHubFake(t)
	f.add(fakeComment{UserID: 7, Body: Marker("prod-eu") + "\neu report"})
	f.add(fakeComment{UserID: 99, Body: "> " + Marker("prod") + "\n> quoted"})
	f.add(fakeComment{UserID: 7, Body: Marker("prod") + "\nold"})
	if _, err := newGitHubCommenter(t, f).Upsert(t.Context(), githubRepo, 12, "prod", "new"); err != nil {
		t.Fatal(err)
	}
	assertLines(t, f.rec.take(), "GET "+githubComments+"?per_page=100", "GET /api/v3/user", "PATCH /api/v3/repos/octo/shop/issues/comments/3")
	got := f.all()
	if got[0].Body != Marker("prod-eu")+"\neu report" || got[1].Body != "> "+Marker("prod")+"\n> quoted" || got[2].Body != Marker("prod")+"\nnew" {
		t.Errorf("comments after Upsert: %+v", got)
	}
}

// With a known identity and no comment of its own, a new one is created
// rather than another user's edited.
func TestGitHubCreatesBesideAnotherUsersMarker(t *testing.T) {
	f := newGitHubFake(t)
	f.add(fakeComment{UserID: 99, Body: Marker("prod") + "\nby someone else"})
	if _, err := newGitHubCommenter(t, f).Upsert(t.Context(), githubRepo, 12, "prod", "mine"); err != nil {
		t.Fatal(err)
	}
	assertLines(t, f.rec.take(), "GET "+githubComments+"?per_page=100", "GET /api/v3/user", "POST "+githubComments)
}

// Actions' GITHUB_TOKEN may not read GET /user (403): the first comment
// with the marker is edited.
func TestGitHubUnknownIdentityEditsFirstMarked(t *testing.T) {
	f := newGitHubFake(t)
	f.selfID = 0
	f.add(fakeComment{UserID: 41, Body: "hello"})
	f.add(fakeComment{UserID: 41, Body: Marker("") + "\nold"})
	f.add(fakeComment{UserID: 41, Body: Marker("") + "\nolder duplicate"})
	if _, err := newGitHubCommenter(t, f).Upsert(t.Context(), githubRepo, 12, "", "new"); err != nil {
		t.Fatal(err)
	}
	assertLines(t, f.rec.take(), "GET "+githubComments+"?per_page=100", "GET /api/v3/user", "PATCH /api/v3/repos/octo/shop/issues/comments/2")
}

// As a GitHub App installation, a comment is ours when GitHub records it as
// performed via our App; no GET /user is made (installations cannot).
func TestGitHubAppEditsItsAppsComment(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	f := newGitHubFake(t)
	f.add(fakeComment{UserID: 500, AppID: 6, Body: Marker("prod") + "\nanother App"})
	f.add(fakeComment{UserID: 501, AppID: 5, Body: Marker("prod") + "\nours"})
	c, err := New(githost.Host{URL: f.URL, Type: githost.GitHub, GitHubApp: &githost.GitHubApp{AppID: 5, InstallationID: 8, PrivateKey: pemKey}}, githost.Clients{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(t.Context(), githubRepo, 12, "prod", "new"); err != nil {
		t.Fatal(err)
	}
	reqs := f.rec.take()
	assertLines(t, reqs, "POST /api/v3/app/installations/8/access_tokens", "GET "+githubComments+"?per_page=100", "PATCH /api/v3/repos/octo/shop/issues/comments/2")
	assertHeader(t, reqs[1:], "Authorization", "token ghs_installation")
}

// A report over GitHub's 65536 characters is sent truncated, with the note.
func TestGitHubTruncatesLongBody(t *testing.T) {
	f := newGitHubFake(t)
	body := strings.Repeat("| web-0 | 10Gi → 20Gi | allowed |\n", 3000)
	if _, err := newGitHubCommenter(t, f).Upsert(t.Context(), githubRepo, 12, "prod", body); err != nil {
		t.Fatal(err)
	}
	got := f.all()[0].Body
	if n := utf8.RuneCountInString(got); n > 65536 || !strings.HasPrefix(got, Marker("prod")+"\n| web-0") || !strings.Contains(got, "**Truncated:** this report has 102000 characters") {
		t.Errorf("posted %d code points, starting %.60q, ending %q", n, got, got[len(got)-150:])
	}
}

// Errors name the repository and the pull request, keep githost's
// classification, and never carry the token.
func TestGitHubErrors(t *testing.T) {
	f := newGitHubFake(t)
	f.fail = 404
	_, err := newGitHubCommenter(t, f).Upsert(t.Context(), githubRepo, 12, "prod", "x")
	var perm *githost.PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("Upsert: %v (%T), want a *githost.PermanentError", err, err)
	}
	want := `comment "prod" on pull request github.example.com/octo/shop#12: github: GET repos/octo/shop/issues/12/comments (page 1): 404 Not Found: refused for xxxxx`
	if err.Error() != want {
		t.Errorf("error\n  %s\nwant\n  %s", err, want)
	}

	assertLines(t, f.rec.take(), "GET "+githubComments+"?per_page=100")
	f.fail = 0
	nested := githost.Repository{Host: "github.example.com", Path: "a/b/c", Owner: "a/b", Name: "c"}
	_, err = newGitHubCommenter(t, f).Upsert(t.Context(), nested, 3, "prod", "x")
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), `pull request github.example.com/a/b/c#3: repository path "a/b/c" is not owner/name`) {
		t.Errorf("nested path: %v", err)
	}
	for _, tc := range []struct {
		number int
		key    string
		want   string
	}{
		{0, "prod", "number 0 is not a pull request number"},
		{1, "a b", `comment key "a b"`},
	} {
		_, err := newGitHubCommenter(t, f).Upsert(t.Context(), githubRepo, tc.number, tc.key, "x")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "octo/shop#") {
			t.Errorf("Upsert(#%d, %q): %v, want an error naming the pull request and %q", tc.number, tc.key, err, tc.want)
		}
	}
	if reqs := f.rec.take(); len(reqs) != 0 {
		t.Errorf("refused arguments still sent %d requests", len(reqs))
	}
}

func TestNewRefusesBitbucket(t *testing.T) {
	_, err := New(githost.Host{URL: "https://bitbucket.org", Type: githost.BitbucketCloud, Token: "t"}, githost.Clients{})
	if err == nil || !strings.Contains(err.Error(), `type "bitbucket-cloud": pull-request comments are supported on github, gitlab and gitea only`) {
		t.Errorf("New(bitbucket-cloud): %v", err)
	}
	_, err = New(githost.Host{URL: "https://git.example.com", Type: githost.GitHub}, githost.Clients{})
	if err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("New without a token: %v", err)
	}
}

// markedBy counts the comments carrying key's marker.
func markedBy(cs []fakeComment, key string) int {
	n := 0
	for _, c := range cs {
		if strings.Contains(c.Body, Marker(key)) {
			n++
		}
	}
	return n
}
