package autoresize

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
)

// A Git host that did not answer, or limited the rate, is not asked again
// before its back-off passes, and the wait says so in the same words until
// then; a refusal (404) starts none, and one host's back-off holds up no
// other. GitHub's protocol on httptest (GitHub cannot run here), and a
// host whose port is closed.
func TestBackOffHosts(t *testing.T) {
	var requests atomic.Int64
	status := atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Method != http.MethodGet || r.URL.Path != "/api/v3/repos/octo/shop" {
			t.Errorf("%s %s, want GET /api/v3/repos/octo/shop", r.Method, r.URL.Path)
		}
		if status.Load() == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "120")
		}
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(`{"message":"no"}`))
	}))
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	proposers := BackOffHosts(func(repo githost.Repository) (pullrequest.Proposer, error) {
		return pullrequest.New(githost.Host{URL: "http://" + repo.Host, Type: githost.GitHub, Token: "t0ken"}, githost.Clients{}, nil)
	})
	proposer := func(base string) pullrequest.Proposer {
		t.Helper()
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		p, err := proposers(githost.Repository{Host: u.Host, Owner: "octo", Name: "shop"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	defaultBranch := func(base string) error {
		_, err := proposer(base).DefaultBranch(ctx, "octo", "shop")
		return err
	}

	// No answer: the host waits, in the same words at each try.
	if err := defaultBranch(closed); err == nil {
		t.Fatal("a closed port answered")
	}
	var wait *HostWait
	first := defaultBranch(closed)
	if !errors.As(first, &wait) || !strings.HasPrefix(first.Error(), "Git host "+strings.TrimPrefix(closed, "http://")+" failed 1 times; next try after ") {
		t.Fatalf("after no answer: %v, want the host's wait", first)
	}
	if again := defaultBranch(closed); again == nil || again.Error() != first.Error() {
		t.Errorf("the wait said %q, then %q: want the same until the next try", first, again)
	}

	// A refusal of the repository: the next request is sent.
	status.Store(http.StatusNotFound)
	for range 2 {
		if err := defaultBranch(srv.URL); err == nil || errors.As(err, &wait) {
			t.Fatalf("a 404: %v, want the host's refusal", err)
		}
	}
	if got := requests.Load(); got != 2 {
		t.Errorf("%d requests for two after a 404, want 2", got)
	}

	// A rate limit: no request before its Retry-After.
	status.Store(http.StatusTooManyRequests)
	if err := defaultBranch(srv.URL); err == nil || errors.As(err, &wait) {
		t.Fatalf("a 429: %v, want the host's answer", err)
	}
	err = defaultBranch(srv.URL)
	if !errors.As(err, &wait) || time.Until(wait.Until) < 110*time.Second {
		t.Fatalf("after a 429 with Retry-After: 120: %v, want a wait of 2 minutes", err)
	}
	if got := requests.Load(); got != 3 {
		t.Errorf("%d requests, want 3: none while the host waits", got)
	}
}

// A StatefulSet waiting on its Git host's back-off says so in the host's
// words, with no event, and it is not its failure (no back-off of its own).
func TestHostWaitIsNoFailure(t *testing.T) {
	j := &job{c: &Controller{}, sts: statefulSet(client.ObjectKey{Namespace: "shop", Name: "web"})}
	wait := &HostWait{Host: "git.example.com", Failures: 3, Until: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	var st v1alpha1.AutoresizeStatus
	// A nil Recorder: an event would panic.
	j.fail(&st, fmt.Errorf("reading apps/web.yaml: %w", wait))
	if want := "Git host git.example.com failed 3 times; next try after 2030-01-02T03:04:05Z"; st.Message != want || j.err != nil {
		t.Errorf("message %q, failed %v; want %q and no failure", st.Message, j.err, want)
	}
}
