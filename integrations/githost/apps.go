package githost

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"

	"github.com/bradleyfalzon/ghinstallation/v2"
)

// AppTransports caches one installation transport per GitHub App
// installation and API, so that clients built per status or per proposal
// share the installation token (valid an hour, refreshed by ghinstallation
// a minute before it expires) instead of minting one each, which GitHub
// rate-limits. The key holds a hash of the private key, so that a rotated
// key gets a new transport. Whoever builds clients owns one (the controller
// makes one at start): a cache shared by a whole process would hand a test
// whose server reuses an earlier one's address that server's transport.
// The zero value is ready; a nil *AppTransports shares nothing.
type AppTransports struct {
	mu sync.Mutex
	m  map[appTransportKey]*ghinstallation.Transport
}

type appTransportKey struct {
	apiURL                string
	appID, installationID int64
	privateKey            [sha256.Size]byte
}

// installation returns the RoundTripper authenticating as app's
// installation: it exchanges a JWT signed with the App's key for an
// installation token (POST <api>/app/installations/<id>/access_tokens) and
// sends "Authorization: token <installation token>". tr carries the
// requests (nil: http.DefaultTransport); a cached transport keeps the tr it
// was built with.
func (a *AppTransports) installation(apiURL string, app *GitHubApp, tr http.RoundTripper) (http.RoundTripper, error) {
	if app.AppID <= 0 || app.InstallationID <= 0 {
		return nil, fmt.Errorf("app ID %d and installation ID %d must be positive", app.AppID, app.InstallationID)
	}
	if a == nil {
		return newInstallationTransport(apiURL, app, tr)
	}
	key := appTransportKey{apiURL, app.AppID, app.InstallationID, sha256.Sum256(app.PrivateKey)}
	a.mu.Lock()
	defer a.mu.Unlock()
	if t, ok := a.m[key]; ok {
		return t, nil
	}
	t, err := newInstallationTransport(apiURL, app, tr)
	if err != nil {
		return nil, err
	}
	if a.m == nil {
		a.m = map[appTransportKey]*ghinstallation.Transport{}
	}
	a.m[key] = t
	return t, nil
}

func newInstallationTransport(apiURL string, app *GitHubApp, tr http.RoundTripper) (*ghinstallation.Transport, error) {
	if tr == nil {
		tr = http.DefaultTransport
	}
	t, err := ghinstallation.New(tr, app.AppID, app.InstallationID, app.PrivateKey)
	if err != nil {
		// The parse error names no key material.
		return nil, fmt.Errorf("private key: %w", err)
	}
	t.BaseURL = apiURL
	return t, nil
}
