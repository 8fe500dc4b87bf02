package pullrequest

import (
	"fmt"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// New returns the Proposer of host h, with its credential, checked as every
// Git-host client checks it (githost.CheckHost: an http(s) URL without
// user information, a token or, for GitHub, an App); clients builds the
// host's API clients (its HTTP client, its shared GitHub App installation
// tokens); ids caches who the credential is across the proposers built for
// one host (nil: this proposer's own cache). Building one makes no request.
func New(h githost.Host, clients githost.Clients, ids *Identities) (Proposer, error) {
	if ids == nil {
		ids = &Identities{}
	}
	base, hc, err := clients.Client(h)
	if err != nil {
		return nil, err
	}
	switch h.Type {
	case githost.Gitea:
		return &Gitea{Base: base, Token: h.Token, HTTP: hc, Identities: ids}, nil
	case githost.GitHub:
		client, err := clients.GitHub(h)
		if err != nil {
			return nil, err
		}
		g := &GitHub{Client: client, Token: h.Token, Identities: ids}
		if h.GitHubApp != nil {
			g.AppID = h.GitHubApp.AppID
			if g.AppClient, err = clients.GitHubApp(h); err != nil {
				return nil, err
			}
		}
		return g, nil
	case githost.GitLab:
		client, err := clients.GitLab(h)
		if err != nil {
			return nil, err
		}
		return &GitLab{Client: client, Token: h.Token, Identities: ids}, nil
	case githost.BitbucketCloud:
		api, err := clients.Bitbucket(h)
		if err != nil {
			return nil, err
		}
		return &BitbucketCloud{b: bitbucketHTTP{Bitbucket: api, ids: ids}}, nil
	case githost.BitbucketServer:
		api, err := clients.Bitbucket(h)
		if err != nil {
			return nil, err
		}
		return &BitbucketServer{b: bitbucketHTTP{Bitbucket: api, ids: ids}}, nil
	}
	return nil, fmt.Errorf("git host %s: pull requests are not opened on type %q", base.Redacted(), h.Type)
}
