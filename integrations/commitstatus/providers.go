package commitstatus

import (
	"sync"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// Providers resolves the Provider of a repository with the credential its
// Secret holds now (githost.Credentials): a rotated token is used from the
// next post on. A provider is reused while its Secret is unchanged.
type Providers struct {
	creds   *githost.Credentials
	clients githost.Clients

	mu sync.Mutex
	// built holds one Provider per host URL with the resourceVersion of the
	// Secret it was built from.
	built map[string]builtProvider
}

type builtProvider struct {
	resourceVersion string
	provider        Provider
}

// NewProviders returns the Providers of the hosts creds configures, built
// by clients.
func NewProviders(creds *githost.Credentials, clients githost.Clients) *Providers {
	return &Providers{creds: creds, clients: clients, built: map[string]builtProvider{}}
}

// ProviderFor is a ProviderFor (ReporterOptions.Providers). Errors name the
// host and the Secret key, never its value.
func (p *Providers) ProviderFor(repo githost.Repository) (Provider, error) {
	cred, err := p.creds.CredentialFor(repo)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	b, ok := p.built[cred.Host.URL]
	p.mu.Unlock()
	if ok && b.resourceVersion == cred.ResourceVersion {
		return b.provider, nil
	}
	provider, err := NewProvider(cred.Host, p.clients)
	if err != nil {
		return nil, cred.Explain(err)
	}
	p.mu.Lock()
	p.built[cred.Host.URL] = builtProvider{resourceVersion: cred.ResourceVersion, provider: provider}
	p.mu.Unlock()
	return provider, nil
}
