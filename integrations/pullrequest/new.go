package pullrequest

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/claimwarden/claimwarden/integrations/gitstatus"
)

// New returns the Proposer of host h, with its credential; hc carries
// every request (nil: http.DefaultClient). Building one makes no request.
func New(h gitstatus.Host, hc *http.Client) (Proposer, error) {
	base, err := url.Parse(h.URL)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" || base.User != nil {
		return nil, fmt.Errorf("git host %q is not an http or https URL without user information", h.URL)
	}
	if h.Token == "" {
		return nil, fmt.Errorf("git host %s: no token: opening pull requests requires one with write access", base.Redacted())
	}
	switch h.Type {
	case gitstatus.Gitea:
		return &Gitea{Base: base, Token: h.Token, HTTP: hc}, nil
	}
	return nil, fmt.Errorf("git host %s: pull requests are not opened on type %q", base.Redacted(), h.Type)
}
