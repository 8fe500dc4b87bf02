package pullrequest

import (
	"fmt"
	"net/http"

	"github.com/claimwarden/claimwarden/integrations/gitstatus"
)

// New returns the Proposer of host h, with its credential, checked as
// commit statuses check it (gitstatus.CheckHost: an http(s) URL without
// user information, a token or, for GitHub, an App); hc carries every
// request (nil: a client with gitstatus.DefaultHTTPTimeout); ids caches who
// the credential is across the proposers built for one host (nil: this
// proposer's own cache). Building one makes no request.
func New(h gitstatus.Host, hc *http.Client, ids *Identities) (Proposer, error) {
	if ids == nil {
		ids = &Identities{}
	}
	base, hc, err := gitstatus.CheckHost(h, hc)
	if err != nil {
		return nil, err
	}
	switch h.Type {
	case gitstatus.Gitea:
		return &Gitea{Base: base, Token: h.Token, HTTP: hc, Identities: ids}, nil
	case gitstatus.GitHub:
		client, err := gitstatus.NewGitHubClient(h, hc)
		if err != nil {
			return nil, err
		}
		g := &GitHub{Client: client, Token: h.Token, Identities: ids}
		if h.GitHubApp != nil {
			g.AppID = h.GitHubApp.AppID
			if g.AppClient, err = gitstatus.NewGitHubAppClient(h, hc); err != nil {
				return nil, err
			}
		}
		return g, nil
	case gitstatus.GitLab:
		client, err := gitstatus.NewGitLabClient(h, hc)
		if err != nil {
			return nil, err
		}
		return &GitLab{Client: client, Token: h.Token, Identities: ids}, nil
	case gitstatus.BitbucketCloud:
		return NewBitbucketCloud(base, h.Token, hc, ids), nil
	case gitstatus.BitbucketServer:
		return NewBitbucketServer(base, h.Token, hc, ids), nil
	}
	return nil, fmt.Errorf("git host %s: pull requests are not opened on type %q", base.Redacted(), h.Type)
}
