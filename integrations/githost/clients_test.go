package githost

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// testToken is a credential that must never show in an error.
const testToken = "tok-3f9a-SECRET"

// The constructors validate the host (CheckHost), and refuse a host of
// another type rather than talk the wrong API to it.
func TestNewClientsCheckHost(t *testing.T) {
	gh := Host{URL: "https://git.example.com", Type: GitHub, Token: testToken}
	gl := Host{URL: "https://git.example.com", Type: GitLab, Token: testToken}
	gt := Host{URL: "https://git.example.com", Type: Gitea, Token: testToken}
	cases := []struct {
		name string
		err  func() error
		want string
	}{
		{"github on gitlab", func() error { _, err := Clients{}.GitHub(gl); return err }, `type "gitlab" is not "github"`},
		{"gitlab on gitea", func() error { _, err := Clients{}.GitLab(gt); return err }, `type "gitea" is not "gitlab"`},
		{"gitea on github", func() error { _, err := Clients{}.Gitea(t.Context(), gh); return err }, `type "github" is not "gitea"`},
		{"no token", func() error { _, err := Clients{}.GitLab(Host{URL: gl.URL, Type: GitLab}); return err }, "no token"},
		{"bad URL", func() error {
			_, err := Clients{}.Gitea(t.Context(), Host{URL: "ftp://x", Type: Gitea, Token: "t"})
			return err
		}, "not an http or https URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "git.example.com") && tc.name != "bad URL" {
				t.Errorf("error %q does not name the host", err)
			}
		})
	}
	for _, ok := range []func() error{
		func() error { _, err := Clients{}.GitHub(gh); return err },
		func() error { _, err := Clients{}.GitLab(gl); return err },
		func() error { _, err := Clients{}.Gitea(t.Context(), gt); return err },
	} {
		if err := ok(); err != nil {
			t.Errorf("valid host refused: %v", err)
		}
	}
}

func TestHostRepositoryPath(t *testing.T) {
	h := Host{URL: "https://git.example.com/gitlab/", Type: GitLab}
	for raw, want := range map[string]string{
		"https://git.example.com/gitlab/group/sub/name.git": "group/sub/name",
		"git@git.example.com:group/name.git":                "group/name",
		// An SSH path never carries the sub-path: "gitlab" is a group here.
		"git@git.example.com:gitlab/name.git": "gitlab/name",
	} {
		repo, err := ParseRepositoryURL(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.RepositoryPath(repo); got != want {
			t.Errorf("RepositoryPath(%s) = %q, want %q", raw, got, want)
		}
	}
}

// A 2xx answer that could not be decoded is neither a refusal nor a rate
// limit: the caller may retry, and learns what happened.
func TestUndecodableAnswerIsRetryable(t *testing.T) {
	resp := &gitlab.Response{Response: &http.Response{StatusCode: http.StatusOK, Header: http.Header{}}}
	err := GitLabError("gitlab: GET projects/g%2Fn/merge_requests/1/notes", resp, errors.New("invalid character '<' for "+testToken), testToken)
	var rl *RateLimitError
	var perm *PermanentError
	if err == nil || errors.As(err, &rl) || errors.As(err, &perm) {
		t.Fatalf("error %v (%T), want a plain retryable error", err, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "200 OK, but the answer could not be read") || strings.Contains(msg, testToken) {
		t.Errorf("error %q: want the code, the cause and no token", msg)
	}
}
