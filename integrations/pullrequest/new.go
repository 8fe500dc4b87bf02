package pullrequest

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/claimwarden/claimwarden/integrations/gitstatus"
)

// New returns the Proposer of host h, with its credential; hc carries
// every request (nil: http.DefaultClient for Gitea and Bitbucket, a client
// with gitstatus.DefaultHTTPTimeout for GitHub and GitLab). Building one
// makes no request.
func New(h gitstatus.Host, hc *http.Client) (Proposer, error) {
	base, err := url.Parse(h.URL)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" || base.User != nil {
		return nil, fmt.Errorf("git host %q is not an http or https URL without user information", h.URL)
	}
	// A GitHub App installation writes without a token (gitstatus refuses
	// an App on other types).
	if h.Token == "" && (h.Type != gitstatus.GitHub || h.GitHubApp == nil) {
		return nil, fmt.Errorf("git host %s: no token: opening pull requests requires one with write access", base.Redacted())
	}
	switch h.Type {
	case gitstatus.Gitea:
		return &Gitea{Base: base, Token: h.Token, HTTP: hc}, nil
	case gitstatus.GitHub:
		client, err := gitstatus.NewGitHubClient(h, hc)
		if err != nil {
			return nil, err
		}
		return &GitHub{Client: client, Token: h.Token}, nil
	case gitstatus.GitLab:
		client, err := gitstatus.NewGitLabClient(h, hc)
		if err != nil {
			return nil, err
		}
		return &GitLab{Client: client, Token: h.Token}, nil
	case gitstatus.BitbucketCloud:
		return NewBitbucketCloud(base, h.Token, hc), nil
	case gitstatus.BitbucketServer:
		return NewBitbucketServer(base, h.Token, hc), nil
	}
	return nil, fmt.Errorf("git host %s: pull requests are not opened on type %q", base.Redacted(), h.Type)
}
