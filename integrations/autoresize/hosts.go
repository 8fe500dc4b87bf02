package autoresize

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
)

// Back-off of a Git host whose requests failed: 5s after the first
// failure, twice as long after each next one, at most 5m.
const (
	hostBaseDelay = 5 * time.Second
	hostMaxDelay  = 5 * time.Minute
)

// HostWait is the error of a request not sent: the Git host failed, and
// its back-off has not passed. Its text is the same until the next try,
// so the status of the StatefulSets waiting on the host is not rewritten
// at each check.
type HostWait struct {
	Host     string
	Failures int
	Until    time.Time
}

func (w *HostWait) Error() string {
	return fmt.Sprintf("Git host %s failed %d times; next try after %s", w.Host, w.Failures, w.Until.UTC().Format(time.RFC3339))
}

// hostBackoff is the back-off of each Git host, by host name.
type hostBackoff struct {
	limiter workqueue.TypedRateLimiter[string]
	mu      sync.Mutex
	until   map[string]time.Time
}

// BackOffHosts returns proposers whose Proposers do not ask a Git host
// whose requests failed until its back-off passes: a host that is down or
// limits the rate is not hammered by every StatefulSet's check, each
// waiting for its timeout. Only the host's own failures count (no answer,
// rate limits, unavailable with a Retry-After), not refusals of one
// repository, which a tenant may cause.
func BackOffHosts(proposers Proposers) Proposers {
	b := &hostBackoff{limiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](hostBaseDelay, hostMaxDelay), until: map[string]time.Time{}}
	return func(repo githost.Repository) (pullrequest.Proposer, error) {
		p, err := proposers(repo)
		if err != nil {
			return nil, err
		}
		h := &backedOff{b: b, host: repo.Host, p: p}
		if _, ok := p.(pullrequest.OpenLister); ok {
			return backedOffLister{h}, nil
		}
		return h, nil
	}
}

// wait is the HostWait of host while its back-off has not passed.
func (b *hostBackoff) wait(host string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if until, ok := b.until[host]; ok && time.Now().Before(until) {
		return &HostWait{Host: host, Failures: b.limiter.NumRequeues(host), Until: until}
	}
	return nil
}

// done counts a request's outcome: a failure of the host's extends its
// back-off, an answer ends it. The end of the check's own context says
// nothing of the host (the check may have spent its time elsewhere).
func (b *hostBackoff) done(ctx context.Context, host string, err error) {
	if ctx.Err() != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !hostFailed(err) {
		b.limiter.Forget(host)
		delete(b.until, host)
		return
	}
	delay := b.limiter.When(host)
	var limited *githost.RateLimitError
	if errors.As(err, &limited) {
		delay = max(delay, limited.RetryAfter)
	}
	var unavailable *githost.UnavailableError
	if errors.As(err, &unavailable) {
		delay = max(delay, unavailable.RetryAfter)
	}
	// Whole seconds: the status says the time, and says it the same way
	// until the next try.
	b.until[host] = time.Now().Add(delay).Truncate(time.Second).Add(time.Second)
}

// hostFailed reports whether err is the host's failure: no answer, a rate
// limit, unavailable; not a refusal or an answer the caller did not like
// (404, a file too large).
func hostFailed(err error) bool {
	var (
		limited     *githost.RateLimitError
		unavailable *githost.UnavailableError
		netErr      net.Error
	)
	return errors.As(err, &limited) || errors.As(err, &unavailable) || errors.As(err, &netErr)
}

// backedOff is a Proposer that waits out its host's back-off.
type backedOff struct {
	b    *hostBackoff
	host string
	p    pullrequest.Proposer
}

// call runs f unless the host is in its back-off, and counts its outcome
// against the host.
func call[T any](ctx context.Context, h *backedOff, f func() (T, error)) (T, error) {
	if err := h.b.wait(h.host); err != nil {
		var zero T
		return zero, err
	}
	v, err := f()
	h.b.done(ctx, h.host, err)
	return v, err
}

func (h *backedOff) Propose(ctx context.Context, c pullrequest.Change) (pullrequest.PullRequest, error) {
	return call(ctx, h, func() (pullrequest.PullRequest, error) { return h.p.Propose(ctx, c) })
}

func (h *backedOff) Last(ctx context.Context, owner, repo, key string) (*pullrequest.PullRequest, error) {
	return call(ctx, h, func() (*pullrequest.PullRequest, error) { return h.p.Last(ctx, owner, repo, key) })
}

func (h *backedOff) File(ctx context.Context, owner, repo, ref, path string) ([]byte, error) {
	return call(ctx, h, func() ([]byte, error) { return h.p.File(ctx, owner, repo, ref, path) })
}

func (h *backedOff) Files(ctx context.Context, owner, repo, ref, dir string) ([]string, error) {
	return call(ctx, h, func() ([]string, error) { return h.p.Files(ctx, owner, repo, ref, dir) })
}

func (h *backedOff) DefaultBranch(ctx context.Context, owner, repo string) (string, error) {
	return call(ctx, h, func() (string, error) { return h.p.DefaultBranch(ctx, owner, repo) })
}

// backedOffLister is the backedOff of a Proposer that lists open pull
// requests (pullrequest.OpenLister).
type backedOffLister struct{ *backedOff }

func (h backedOffLister) Open(ctx context.Context, owner, repo, prefix string) (map[string]pullrequest.PullRequest, error) {
	return call(ctx, h.backedOff, func() (map[string]pullrequest.PullRequest, error) {
		return h.p.(pullrequest.OpenLister).Open(ctx, owner, repo, prefix)
	})
}
