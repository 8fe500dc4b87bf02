package gitstatus

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestResolveHost(t *testing.T) {
	ghe := Host{URL: "https://github.example.com", Type: GitHub, Token: "a"}
	gl8443 := Host{URL: "https://gitlab.example.com:8443/", Type: GitLab, Token: "b"}
	gl9443 := Host{URL: "https://gitlab.example.com:9443", Type: GitLab, Token: "c"}
	bbs := Host{URL: "https://BB.example.com:443/bitbucket", Type: BitbucketServer, Token: "d"}
	ghCom := Host{URL: "https://github.com", Type: GitHub, Token: "e"}
	v6 := Host{URL: "https://[2001:DB8::1]:8443", Type: Gitea, Token: "f"}
	configured := []Host{ghe, gl8443, gl9443, bbs}

	for _, tc := range []struct {
		name  string
		repo  string
		hosts []Host
		want  Host
		ok    bool
	}{
		{"self-hosted by host name", "https://github.example.com/o/r.git", configured, ghe, true},
		{"host name and port pick among same-name hosts", "https://gitlab.example.com:9443/g/s/r", configured, gl9443, true},
		{"an SSH port is not the API port: first host of that name", "ssh://git@gitlab.example.com:2222/g/r.git", configured, gl8443, true},
		{"scp-like to a host configured with a port", "git@gitlab.example.com:g/r.git", configured, gl8443, true},
		{"default port and case ignored", "https://bb.example.com/scm/P/r.git", configured, bbs, true},
		{"github.com without configuration", "git@github.com:o/r.git", configured, Host{URL: "https://github.com", Type: GitHub}, true},
		{"ssh.github.com is github.com", "ssh://git@ssh.github.com:443/o/r.git", nil, Host{URL: "https://github.com", Type: GitHub}, true},
		{"gitlab.com without configuration", "https://gitlab.com/a/b/c", nil, Host{URL: "https://gitlab.com", Type: GitLab}, true},
		{"bitbucket.org without configuration", "git@bitbucket.org:ws/r.git", nil, Host{URL: "https://bitbucket.org", Type: BitbucketCloud}, true},
		{"a configured github.com wins over the default", "https://github.com/o/r", []Host{ghCom}, ghCom, true},
		{"IPv6 literal, SSH port", "ssh://git@[2001:db8::1]:2222/o/r.git", []Host{v6}, v6, true},
		{"unknown host", "https://git.unknown.example/o/r", configured, Host{}, false},
		{"a host name that only ends like a configured one", "https://evilgithub.example.com/o/r", configured, Host{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, err := ParseRepositoryURL(tc.repo)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := ResolveHost(repo, tc.hosts)
			if ok != tc.ok || got.URL != tc.want.URL || got.Type != tc.want.Type || got.Token != tc.want.Token {
				t.Errorf("ResolveHost(%s) = %+v, %v; want %+v, %v", repo.Host, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// NewProvider refuses what cannot work, saying why, without quoting
// credentials.
func TestNewProviderErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		host Host
		want string
	}{
		{"no URL", Host{Type: GitHub, Token: "t"}, "git host URL is empty"},
		{"not http", Host{URL: "ssh://github.example.com", Type: GitHub, Token: "t"}, "is not an http or https URL"},
		{"no host", Host{URL: "https://", Type: GitHub, Token: "t"}, "is not an http or https URL"},
		{"credentials in the URL", Host{URL: "https://user:SECRET@git.example.com", Type: Gitea, Token: "t"}, `"https://xxxxx@git.example.com" holds user information`},
		{"unknown type", Host{URL: "https://git.example.com", Type: "gogs", Token: "t"}, `type "gogs" is not one of github, gitlab, gitea, bitbucket-cloud, bitbucket-server`},
		{"no token", Host{URL: "https://git.example.com", Type: GitLab}, "no token"},
		{"App on GitLab", Host{URL: "https://git.example.com", Type: GitLab, GitHubApp: &GitHubApp{AppID: 1, InstallationID: 2}}, "a GitHub App authenticates to type \"github\" only"},
		{"App without IDs", Host{URL: "https://git.example.com", Type: GitHub, GitHubApp: &GitHubApp{PrivateKey: []byte("x")}}, "must be positive"},
		{"App with a bad key", Host{URL: "https://git.example.com", Type: GitHub, GitHubApp: &GitHubApp{AppID: 1, InstallationID: 2, PrivateKey: []byte("SECRET not a PEM key")}}, "private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewProvider(tc.host, nil)
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
	for _, typ := range HostTypes() {
		if _, err := NewProvider(Host{URL: srv.URL, Type: typ, Token: "t"}, &http.Client{Timeout: time.Second}); err != nil {
			t.Errorf("NewProvider(%s): %v", typ, err)
		}
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("building providers made %d requests, want 0", n)
	}
	var names []string
	for _, typ := range HostTypes() {
		names = append(names, string(typ))
	}
	if got := strings.Join(names, ","); got != "github,gitlab,gitea,bitbucket-cloud,bitbucket-server" {
		t.Errorf("HostTypes() = %s", got)
	}
}

// Invalid statuses are refused before any request, as permanent.
func TestPostRefusesInvalidStatus(t *testing.T) {
	srv := newAPIServer(t, http.StatusCreated, nil, `{}`)
	repo := Repository{Host: "h", Path: "o/r", Owner: "o", Name: "r"}
	for _, typ := range HostTypes() {
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
			if _, ok := err.(*PermanentError); !ok {
				t.Errorf("%s: Post(%q, %+v) = %v, want *PermanentError", typ, bad.sha, bad.s, err)
			}
		}
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("invalid statuses made %d requests, want 0", n)
	}
}
