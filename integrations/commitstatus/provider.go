package commitstatus

import (
	"fmt"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// NewProvider returns the provider posting to h, with the clients built by
// clients (its HTTP client, its shared GitHub App installation tokens).
// Building a provider makes no request, so one may be built per status
// (e.g. to pick up a rotated token).
func NewProvider(h githost.Host, clients githost.Clients) (Provider, error) {
	base, _, err := githost.CheckHost(h, clients.HTTP)
	if err != nil {
		return nil, err
	}
	switch h.Type {
	case githost.GitHub:
		return newGitHubProvider(h, clients)
	case githost.GitLab:
		return newGitLabProvider(h, clients)
	case githost.Gitea:
		return &giteaProvider{host: h, clients: clients}, nil
	case githost.BitbucketCloud:
		return newBitbucketCloudProvider(h, clients)
	case githost.BitbucketServer:
		return newBitbucketServerProvider(h, clients)
	}
	return nil, fmt.Errorf("git host %s: type %q is not one of %s", base.Redacted(), h.Type, githost.JoinHostTypes())
}
