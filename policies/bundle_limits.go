package policies

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/open-policy-agent/opa/v1/plugins/rest"
)

// Defaults of BundleSource's whole-download bounds.
const (
	DefaultBundleTotalSizeLimit  = 64 << 20
	DefaultBundleDownloadTimeout = 60 * time.Second
)

// boundedAuthName is the auth plugin restClient names so that OPA's REST
// client asks boundedAuth for its HTTP client.
const boundedAuthName = "claimwarden-bounded"

// boundedAuth wraps the auth plugin OPA would use for a bundle's service
// (bearer token, TLS) to bound every download as a whole: OPA limits each
// file of a bundle but neither the sum (a gzip of 400 files of 900 KB is
// small on the wire and 350 MB loaded) nor the time a server may take to
// send it (1 byte/s never ends). OPA's REST client offers no other hook
// for its transport.
type boundedAuth struct {
	inner    rest.HTTPAuthPlugin
	innerCfg rest.Config
	bundle   string
	limit    int64
	timeout  time.Duration
}

func (a *boundedAuth) NewClient(rest.Config) (*http.Client, error) {
	hc, err := a.inner.NewClient(a.innerCfg)
	if err != nil {
		return nil, err
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = &boundedTransport{next: next, auth: a}
	return hc, nil
}

func (a *boundedAuth) Prepare(req *http.Request) error { return a.inner.Prepare(req) }

// boundedTransport reads the whole response within the deadline and the
// size limit before OPA sees it, so OPA's reader never waits on the
// network and never unpacks more than the limit.
type boundedTransport struct {
	next http.RoundTripper
	auth *boundedAuth
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	a := t.auth
	ctx, cancel := context.WithTimeout(req.Context(), a.timeout)
	defer cancel()
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		return nil, t.explain(ctx, err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, a.limit+1))
	_ = resp.Body.Close()
	if err != nil {
		return nil, t.explain(ctx, err)
	}
	if int64(len(body)) > a.limit {
		return nil, fmt.Errorf("bundle %s is larger than %d bytes (totalSizeLimitBytes)", a.bundle, a.limit)
	}
	if resp.StatusCode == http.StatusOK {
		if err := t.checkUnpacked(body); err != nil {
			return nil, err
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// checkUnpacked decompresses the bundle into nothing, stopping at the
// limit: the tarball, every file and its headers, as OPA would unpack it.
// A body that is not gzip is left to OPA's reader to refuse.
func (t *boundedTransport) checkUnpacked(body []byte) error {
	a := t.auth
	gz, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(gz, a.limit+1))
	if n > a.limit {
		return fmt.Errorf("bundle %s unpacks to more than %d bytes (totalSizeLimitBytes)", a.bundle, a.limit)
	}
	return nil
}

func (t *boundedTransport) explain(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("bundle %s: download not finished within %s (downloadTimeout)", t.auth.bundle, t.auth.timeout)
	}
	return err
}
