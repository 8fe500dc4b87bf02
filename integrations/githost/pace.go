package githost

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// maxPace bounds how long a host's answer stops requests: GitHub's
// primary limit resets within the hour, and a longer wait is a
// misconfigured proxy's, which must not stop every status and pull
// request until a restart.
const maxPace = time.Hour

// Pacer remembers, per Git host and credential, until when the host asked
// not to be called: a rate limit (429, or 403 with X-RateLimit-Remaining: 0
// or Retry-After) or an outage (5xx with Retry-After). Every client built
// by Clients with the same Pacer honours it before sending, so that the
// commit statuses and autoresize's pull requests, which share a token when
// the operator configured one for both, share its limit: neither spends
// what the other was told to wait out. Requests it holds back are not
// sent and fail with a *RateLimitError saying until when. The zero value
// is ready; a nil *Pacer paces nothing.
type Pacer struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// client is hc with its requests for h (base URL base) paced by p.
func (p *Pacer) client(h Host, base *url.URL, hc *http.Client) *http.Client {
	if p == nil {
		return hc
	}
	return wrapped(hc, func(next http.RoundTripper) http.RoundTripper {
		return &pacedTransport{p: p, key: paceKey(h, base), host: base.Redacted(), next: next}
	})
}

// wrapped is a copy of hc whose transport is wrap of hc's.
func wrapped(hc *http.Client, wrap func(next http.RoundTripper) http.RoundTripper) *http.Client {
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c := *hc
	c.Transport = wrap(next)
	return &c
}

// paceKey names h's credential at base: a host counts a token's requests
// (or a GitHub App installation's) together, whoever sends them. The
// token is hashed: keys are not secrets.
func paceKey(h Host, base *url.URL) string {
	if a := h.GitHubApp; a != nil {
		return fmt.Sprintf("%s app %d installation %d", base, a.AppID, a.InstallationID)
	}
	sum := sha256.Sum256([]byte(h.Token))
	return base.String() + " token " + hex.EncodeToString(sum[:8])
}

// waiting is until when key's requests wait; false when they do not.
func (p *Pacer) waiting(key string, now time.Time) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.until[key]
	if ok && !now.Before(until) {
		delete(p.until, key)
		return time.Time{}, false
	}
	return until, ok
}

// observe records what an answer to one of key's requests says of the
// host: when it takes requests again, if it said so.
func (p *Pacer) observe(key string, code int, header http.Header, now time.Time) {
	limited := code == http.StatusTooManyRequests || code == http.StatusForbidden && rateLimitExhausted(header)
	if !limited && code < 500 {
		return
	}
	d := min(retryAfter(header, now), maxPace)
	if d <= 0 {
		// Said nothing of when: each caller backs off on its own.
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.until == nil {
		p.until = map[string]time.Time{}
	}
	if until := now.Add(d); until.After(p.until[key]) {
		p.until[key] = until
	}
}

// pacedTransport holds back the requests of one host and credential while
// the host asked to wait, and reads every answer for such a request.
type pacedTransport struct {
	p    *Pacer
	key  string
	host string
	next http.RoundTripper
}

func (t *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now()
	if until, ok := t.p.waiting(t.key, now); ok {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &RateLimitError{RetryAfter: until.Sub(now), Err: fmt.Errorf(
			"git host %s asked this credential's requests to wait until %s: not sent", t.host, until.UTC().Format(time.RFC3339))}
	}
	resp, err := t.next.RoundTrip(req)
	if err == nil {
		t.p.observe(t.key, resp.StatusCode, resp.Header, time.Now())
	}
	return resp, err
}
