package githost

import (
	"fmt"
	"net/http"
	"net/url"
)

// Clients builds the API clients of Git hosts, one constructor per host
// type. Building a client makes no request, so one may be built per use
// (e.g. to pick up a rotated token). The zero value works: requests go
// through a client with DefaultHTTPTimeout, and no GitHub App installation
// token is shared.
type Clients struct {
	// HTTP carries every request (proxies, CAs); nil means a client with
	// DefaultHTTPTimeout.
	HTTP *http.Client
	// Apps shares GitHub App installation transports between the clients
	// built; nil means every GitHub client of an App mints its own token.
	Apps *AppTransports
	// Pacer holds back the requests of a host and credential the host
	// asked to wait, for every client built; nil paces nothing.
	Pacer *Pacer
	// Conditional makes every client's GET requests conditional (ETags);
	// nil makes none.
	Conditional *Conditional
}

// Client validates h's URL and credentials (CheckHost) and returns h's
// base URL and the HTTP client of its requests, paced by c.Pacer, its GET
// requests conditional through c.Conditional.
func (c Clients) Client(h Host) (*url.URL, *http.Client, error) {
	base, hc, err := CheckHost(h, c.HTTP)
	if err != nil {
		return nil, nil, err
	}
	return base, c.Pacer.client(h, base, c.Conditional.client(h, base, hc)), nil
}

// check validates h's URL and credentials (CheckHost) and that h has type
// typ, rather than talk the wrong API to it; it returns h's base URL and the
// HTTP client.
func (c Clients) check(h Host, typ HostType) (*url.URL, *http.Client, error) {
	base, hc, err := c.Client(h)
	if err != nil {
		return nil, nil, err
	}
	if h.Type != typ {
		return nil, nil, fmt.Errorf("git host %s: type %q is not %q", base.Redacted(), h.Type, typ)
	}
	return base, hc, nil
}
