package autoresize

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// A host that rate-limits the commit statuses (429, Retry-After) holds
// back autoresize's requests with the same token too, without them being
// sent, and both go on once it said they may: the status is posted after
// the wait, nothing is lost; a request with another token is not held
// back. GitHub's protocol on httptest, every request recorded.
func TestStatusesAndPullRequestsShareTheRateLimit(t *testing.T) {
	const retryAfter = time.Second
	var mu sync.Mutex
	var requests []string
	var limitedAt, postedAt time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requests = append(requests, r.Header.Get("Authorization")+" "+r.Method+" "+r.URL.Path)
		switch {
		case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/api/v3/repos/octo/shop/statuses/") && limitedAt.IsZero():
			limitedAt = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"message":"slow down"}`))
		case r.Method == http.MethodPost:
			postedAt = time.Now()
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"state":"pending"}`))
		case r.URL.Path == "/api/v3/user":
			_, _ = w.Write([]byte(`{"login":"claimwarden","id":7}`))
		case r.URL.Path == "/api/v3/repos/octo/shop/pulls":
			_, _ = w.Write([]byte(`[]`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	sent := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), requests...)
	}
	clients := githost.Clients{Pacer: &githost.Pacer{}}
	host := func(token string) githost.Host { return githost.Host{URL: srv.URL, Type: githost.GitHub, Token: token} }
	repo := githost.Repository{Host: strings.TrimPrefix(srv.URL, "http://"), Owner: "octo", Name: "shop", Path: "octo/shop"}

	reporter := commitstatus.NewReporter(commitstatus.ReporterOptions{
		Providers: func(githost.Repository) (commitstatus.Provider, error) {
			return commitstatus.NewProvider(host("t0ken"), clients)
		},
	})
	testenv.RunT(t, reporter)
	reporter.Report(commitstatus.Target{Repo: repo, SHA: strings.Repeat("a", 40), Context: "claimwarden/shop/web"}, commitstatus.Status{State: commitstatus.Pending})
	within(t, 10*time.Second, "the status rate-limited", func() bool { return len(sent()) == 1 })

	proposers := BackOffHosts(func(githost.Repository) (pullrequest.Proposer, error) {
		return pullrequest.New(host("t0ken"), clients, nil)
	})
	p, err := proposers(repo)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Last(context.Background(), "octo", "shop", "autoresize/shop/web")
	var limited *githost.RateLimitError
	if !errors.As(err, &limited) || limited.RetryAfter <= 0 || limited.RetryAfter > retryAfter {
		t.Errorf("autoresize's request while the statuses wait: %v, want a rate limit of at most %v, not sent", err, retryAfter)
	}
	if got := sent(); len(got) != 1 {
		t.Errorf("requests %q: autoresize's was sent while the host asked its token to wait", got)
	}
	other, err := pullrequest.New(host("another-t0ken"), clients, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Last(context.Background(), "octo", "shop", "autoresize/shop/web"); err != nil {
		t.Errorf("a request with another token: %v, want it sent and answered", err)
	}

	within(t, 10*time.Second, "the status posted after the wait", func() bool { return reporter.Pending() == 0 })
	posts := 0
	for _, r := range sent() {
		if strings.HasPrefix(r, "Bearer t0ken POST") {
			posts++
		}
	}
	if posts != 2 {
		t.Errorf("requests %q: want the status posted twice (rate-limited, then accepted)", sent())
	}
	mu.Lock()
	defer mu.Unlock()
	if gap := postedAt.Sub(limitedAt); gap < retryAfter {
		t.Errorf("the status was posted again %v after the rate limit, want after Retry-After %v", gap, retryAfter)
	}
}
