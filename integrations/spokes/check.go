package spokes

import (
	"errors"
	"fmt"
	"net/url"

	"k8s.io/client-go/rest"
)

// check refuses what no parser may hand back, whichever tool's format it
// read: a server that is not https (client-go sends no credential over
// http, and a token must not travel in the clear), code run to
// authenticate, a file read for a credential, no credential at all, or TLS
// settings that do not load. Parsers give the precise field; this is the
// guarantee Load makes for every spoke.
func check(server string, cfg *rest.Config) error {
	u, err := url.Parse(server)
	switch {
	case err != nil:
		// url.Error quotes the URL, which may hold a password.
		return errors.New("the server is not a URL")
	case u.User != nil:
		return errors.New("the server URL holds a user name or password")
	case u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("server %s is not an https URL", server)
	case cfg == nil:
		return errors.New("no client configuration was parsed")
	case cfg.ExecProvider != nil || cfg.AuthProvider != nil:
		return errors.New("the credential runs code in claimwarden's Pod (an exec plugin or auth provider)")
	case cfg.BearerTokenFile != "" || cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "":
		return errors.New("the credential names a file in claimwarden's Pod")
	case cfg.BearerToken == "" && cfg.Username == "" && (len(cfg.CertData) == 0 || len(cfg.KeyData) == 0):
		return errors.New("there is no credential: a bearer token, a user name and password, or a client certificate and key")
	}
	if _, err := rest.TLSConfigFor(cfg); err != nil {
		return fmt.Errorf("the TLS settings do not load: %w", err)
	}
	return nil
}
