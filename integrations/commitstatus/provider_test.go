package commitstatus

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// NewProvider refuses what cannot work, saying why, without quoting
// credentials.
func TestNewProviderErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		host githost.Host
		want string
	}{
		{"no URL", githost.Host{Type: githost.GitHub, Token: "t"}, "git host URL is empty"},
		{"not http", githost.Host{URL: "ssh://github.example.com", Type: githost.GitHub, Token: "t"}, "is not an http or https URL"},
		{"no host", githost.Host{URL: "https://", Type: githost.GitHub, Token: "t"}, "is not an http or https URL"},
		{"credentials in the URL", githost.Host{URL: "https://user:SECRET@git.example.com", Type: githost.Gitea, Token: "t"}, `"https://xxxxx@git.example.com" holds user information`},
		{"unknown type", githost.Host{URL: "https://git.example.com", Type: "gogs", Token: "t"}, `type "gogs" is not one of github, gitlab, gitea, bitbucket-cloud, bitbucket-server`},
		{"no token", githost.Host{URL: "https://git.example.com", Type: githost.GitLab}, "no token"},
		{"App on GitLab", githost.Host{URL: "https://git.example.com", Type: githost.GitLab, GitHubApp: &githost.GitHubApp{AppID: 1, InstallationID: 2}}, "a GitHub App authenticates to type \"github\" only"},
		{"App without IDs", githost.Host{URL: "https://git.example.com", Type: githost.GitHub, GitHubApp: &githost.GitHubApp{PrivateKey: []byte("x")}}, "must be positive"},
		{"App with a bad key", githost.Host{URL: "https://git.example.com", Type: githost.GitHub, GitHubApp: &githost.GitHubApp{AppID: 1, InstallationID: 2, PrivateKey: []byte("SECRET not a PEM key")}}, "private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewProvider(tc.host, githost.Clients{})
			if err == nil {
				t.Fatalf("NewProvider succeeded, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q shows a credential", err)
			}
		})
	}
}

// Every type builds without a request (a provider may be built per status),
// and the config package's list of types is this one's.
func TestNewProviderEveryType(t *testing.T) {
	srv := newAPIServer(t, http.StatusOK, nil, "")
	for _, typ := range githost.HostTypes() {
		if _, err := NewProvider(githost.Host{URL: srv.URL, Type: typ, Token: "t"}, githost.Clients{HTTP: &http.Client{Timeout: time.Second}}); err != nil {
			t.Errorf("NewProvider(%s): %v", typ, err)
		}
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("building providers made %d requests, want 0", n)
	}
	var names []string
	for _, typ := range githost.HostTypes() {
		names = append(names, string(typ))
	}
	if got := strings.Join(names, ","); got != "github,gitlab,gitea,bitbucket-cloud,bitbucket-server" {
		t.Errorf("HostTypes() = %s", got)
	}
}

// Invalid statuses are refused before any request, as permanent.
func TestPostRefusesInvalidStatus(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	repo := githost.Repository{Host: "h", Path: "o/r", Owner: "o", Name: "r"}
	for _, typ := range githost.HostTypes() {
		p := newTestProvider(t, typ, srv.URL)
		for _, bad := range []struct {
			sha string
			s   Status
		}{
			{testSHA, Status{State: "warning", Context: "c"}},
			{testSHA, Status{State: Success}},
			{"", Status{State: Success, Context: "c"}},
		} {
			err := p.Post(t.Context(), repo, bad.sha, bad.s)
			if _, ok := err.(*githost.PermanentError); !ok {
				t.Errorf("%s: Post(%q, %+v) = %v, want *PermanentError", typ, bad.sha, bad.s, err)
			}
		}
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("invalid statuses made %d requests, want 0", n)
	}
}
