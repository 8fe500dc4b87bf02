package githost

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// A host's answer paces the credential it was sent with, and only as long
// as it said (at most maxPace): a 429 or a 403 of GitHub's limits with a
// wait, a 5xx with a Retry-After; an answer that says no wait paces
// nothing, nor does a refusal. Another credential of the same host is not
// paced; the wait ends when it says.
func TestPacer(t *testing.T) {
	base, err := url.Parse("https://github.example/api/v3")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	key := paceKey(Host{Token: "t0ken"}, base)
	if strings.Contains(key, "t0ken") {
		t.Errorf("key %q holds the token", key)
	}
	if other := paceKey(Host{Token: "another"}, base); other == key {
		t.Errorf("two tokens share key %q", key)
	}
	if app := paceKey(Host{GitHubApp: &GitHubApp{AppID: 1, InstallationID: 2}}, base); app == key || !strings.Contains(app, "app 1 installation 2") {
		t.Errorf("a GitHub App installation's key %q", app)
	}
	for _, tc := range []struct {
		name   string
		code   int
		header http.Header
		want   time.Duration // 0: not paced
	}{
		{"429 with Retry-After", http.StatusTooManyRequests, http.Header{"Retry-After": {"30"}}, 30 * time.Second},
		{"primary limit", http.StatusForbidden, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"120"}}, 2 * time.Minute},
		{"503 with Retry-After", http.StatusServiceUnavailable, http.Header{"Retry-After": {"5"}}, 5 * time.Second},
		{"a year", http.StatusTooManyRequests, http.Header{"Retry-After": {"31536000"}}, maxPace},
		{"429 saying nothing", http.StatusTooManyRequests, http.Header{}, 0},
		{"a refusal", http.StatusForbidden, http.Header{}, 0},
		{"a 500", http.StatusInternalServerError, http.Header{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Pacer{}
			p.observe(key, tc.code, tc.header, now)
			until, ok := p.waiting(key, now)
			if ok != (tc.want > 0) || ok && until.Sub(now) != tc.want {
				t.Errorf("paced %v until %v, want %v", ok, until, tc.want)
			}
			if _, ok := p.waiting(paceKey(Host{Token: "another"}, base), now); ok {
				t.Error("another token is paced")
			}
			if _, ok := p.waiting(key, now.Add(tc.want)); ok {
				t.Errorf("still paced %v later", tc.want)
			}
		})
	}
}

// A paced request is not sent: it fails with a *RateLimitError saying
// how long is left, its body closed.
func TestPacedRequestIsNotSent(t *testing.T) {
	sent := 0
	p := &Pacer{}
	base, _ := url.Parse("https://github.example")
	hc := p.client(Host{Token: "t0ken"}, base, &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"60"}}, Body: http.NoBody}, nil
	})})
	for range 2 {
		resp, err := hc.Post("https://github.example/api/v3/repos/o/r/statuses/abc", "application/json", strings.NewReader("{}"))
		if err == nil {
			_ = resp.Body.Close()
		}
	}
	_, err := hc.Get("https://github.example/api/v3/user")
	var limited *RateLimitError
	if sent != 1 || !errors.As(err, &limited) || limited.RetryAfter <= 50*time.Second || !strings.Contains(err.Error(), "not sent") {
		t.Errorf("%d sent, then %v: want 1 sent, then a rate limit of about 60s, not sent", sent, err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
