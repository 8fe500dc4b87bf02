package githost

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// HostType is the API a Git host speaks.
type HostType string

// Host types, as gitStatus.hosts[].type spells them.
const (
	// GitHub is github.com and GitHub Enterprise Server.
	GitHub HostType = "github"
	// GitLab is gitlab.com and self-managed GitLab.
	GitLab HostType = "gitlab"
	// Gitea is Gitea and Forgejo (Forgejo keeps Gitea's API).
	Gitea HostType = "gitea"
	// BitbucketCloud is bitbucket.org.
	BitbucketCloud HostType = "bitbucket-cloud"
	// BitbucketServer is Bitbucket Server and Bitbucket Data Center.
	BitbucketServer HostType = "bitbucket-server"
)

// HostTypes returns every HostType, in the order documentation lists them.
func HostTypes() []HostType {
	return []HostType{GitHub, GitLab, Gitea, BitbucketCloud, BitbucketServer}
}

// Host is one Git host and the credentials to call it with.
type Host struct {
	// URL is the host's base URL as users browse it, e.g.
	// https://github.example.com or https://gitlab.example.com/gitlab (a
	// path is kept: instances served under a sub-path). The API URL is
	// derived from it: api.github.com for https://github.com, <URL>/api/v3
	// for GitHub Enterprise, <URL>/api/v4 for GitLab, <URL>/api/v1 for
	// Gitea, api.bitbucket.org for https://bitbucket.org, <URL>/rest/... for
	// Bitbucket Server.
	URL string
	// Type is the API the host speaks.
	Type HostType
	// Token is the access token. GitHub, GitLab, Bitbucket Cloud and
	// Bitbucket Server: a personal, project, repository or workspace access
	// token, sent as a bearer token (GitLab: PRIVATE-TOKEN). Gitea: an
	// access token, sent as "token <Token>".
	Token string
	// GitHubApp authenticates as a GitHub App installation instead of with
	// Token (type github only).
	GitHubApp *GitHubApp
}

// GitHubApp identifies a GitHub App installation. PrivateKey is the App's
// PEM-encoded RSA private key.
type GitHubApp struct {
	AppID, InstallationID int64
	PrivateKey            []byte
}

// DefaultHTTPTimeout bounds each request of a client built with a nil
// http.Client, so that a Git host that accepts a connection and never
// answers cannot hold a caller forever.
const DefaultHTTPTimeout = 30 * time.Second

// publicHosts are the hosts known without configuration, by the host name
// their repository URLs carry. ssh.github.com, altssh.gitlab.com and
// altssh.bitbucket.org serve SSH on port 443 for networks that block 22;
// their repositories live on the main host.
var publicHosts = map[string]Host{
	"github.com":           {URL: "https://github.com", Type: GitHub},
	"ssh.github.com":       {URL: "https://github.com", Type: GitHub},
	"gitlab.com":           {URL: "https://gitlab.com", Type: GitLab},
	"altssh.gitlab.com":    {URL: "https://gitlab.com", Type: GitLab},
	"bitbucket.org":        {URL: "https://bitbucket.org", Type: BitbucketCloud},
	"altssh.bitbucket.org": {URL: "https://bitbucket.org", Type: BitbucketCloud},
}

// ResolveHost returns the host that serves repo: the
// configured host whose URL names repo's host, else the public default for
// github.com, gitlab.com and bitbucket.org (which carries no credentials:
// the caller supplies them), else false.
//
// A configured host matches on host name and port first (default ports
// ignored, as ParseRepositoryURL drops them). Failing that it matches on
// the host name alone, because an SSH remote's port (git@host:… or
// ssh://git@host:7999/…) is the SSH server's, never the API's: the first
// configured host with that name is chosen.
func ResolveHost(repo Repository, hosts []Host) (Host, bool) {
	repoHost := strings.ToLower(repo.Host)
	repoName := hostnameOf(repoHost)
	byName := -1
	for i, h := range hosts {
		u, err := url.Parse(h.URL)
		if err != nil || u.Host == "" {
			continue
		}
		if hostKey(u) == repoHost {
			return h, true
		}
		if byName < 0 && strings.ToLower(u.Hostname()) == repoName {
			byName = i
		}
	}
	if byName >= 0 {
		return hosts[byName], true
	}
	if h, ok := publicHosts[repoName]; ok {
		return h, true
	}
	return Host{}, false
}

// hostKey is u's lower-cased host[:port] without the scheme's default port.
func hostKey(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// hostnameOf strips the port from host[:port], and the brackets from an
// IPv6 literal, as url.URL.Hostname does.
func hostnameOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// CheckHost validates h's URL and credentials, for every client alike, and
// returns the base URL (h.URL without a trailing slash, query or fragment)
// and hc, or a client with DefaultHTTPTimeout when hc is nil.
func CheckHost(h Host, hc *http.Client) (*url.URL, *http.Client, error) {
	if hc == nil {
		hc = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	base, err := parseBaseURL(h.URL)
	if err != nil {
		return nil, nil, err
	}
	if h.GitHubApp != nil && h.Type != GitHub {
		return nil, nil, fmt.Errorf("git host %s: a GitHub App authenticates to type %q only, not %q", base.Redacted(), GitHub, h.Type)
	}
	if h.Token == "" && h.GitHubApp == nil {
		return nil, nil, fmt.Errorf("git host %s: no token: every API claimwarden calls requires one", base.Redacted())
	}
	return base, hc, nil
}

// JoinHostTypes lists HostTypes as errors name them: "github, gitlab, ...".
func JoinHostTypes() string {
	var s []string
	for _, t := range HostTypes() {
		s = append(s, string(t))
	}
	return strings.Join(s, ", ")
}

// parseBaseURL checks a Host.URL and returns it without a trailing slash,
// query or fragment.
func parseBaseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("git host URL is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err // url.Error quotes the URL, password included
		}
		return nil, fmt.Errorf("git host URL %q: %v", proposal.RedactURL(raw), err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("git host URL %q is not an http or https URL", proposal.RedactURL(raw))
	}
	if u.User != nil {
		return nil, fmt.Errorf("git host URL %q holds user information: pass the token in Host.Token", proposal.RedactURL(raw))
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// RepositoryPath is repo's path inside h's instance, as its API names the
// repository or project: repo.Path without the sub-path h.URL is served
// under (https://host/gitlab), which HTTPS clone URLs include. A URL that
// does not parse (which the constructors refuse) leaves the path as it is.
func (h Host) RepositoryPath(repo Repository) string {
	base, err := parseBaseURL(h.URL)
	if err != nil {
		return repo.Path
	}
	return stripBasePath(base, repo.Path)
}

// stripBasePath removes a host's sub-path (an instance served at
// https://host/gitlab) from the front of a repository path, since HTTPS
// clone URLs include it and the API wants the path inside the instance.
func stripBasePath(base *url.URL, repoPath string) string {
	prefix := strings.Trim(base.Path, "/")
	if prefix == "" {
		return repoPath
	}
	// Only when an owner remains: an SSH path "gitlab/name" on an instance
	// at /gitlab is the group "gitlab", not the sub-path.
	if rest, ok := strings.CutPrefix(repoPath, prefix+"/"); ok && strings.Contains(rest, "/") {
		return rest
	}
	return repoPath
}
