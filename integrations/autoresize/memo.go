package autoresize

import (
	"context"
	"sync"
	"time"

	"github.com/claimwarden/claimwarden/integrations/usage"
)

// maxBatchNamespaces bounds the namespaces one usage read asks for: their
// series count against usage.MaxSeries together, and each is a name in
// the query.
const maxBatchNamespaces = 50

// usageMemo reads the usage of each namespace once: a round asks
// Prometheus once per batch of namespaces (the round's, read together by
// the first check that needs one of them), not once per namespace or
// StatefulSet. A batch read that fails or has not answered within its
// wait is given up on: each of its namespaces is then read on its own, so
// that one namespace whose read fails or hangs holds up no other for
// longer than that wait.
type usageMemo struct {
	u  Usage
	mu sync.Mutex
	ns map[string]*namespaceUsage
	// batches are the round's namespaces by batch; wait is how long a
	// check waits for its batch's read.
	batches map[string]*batchUsage
	wait    time.Duration
}

// namespaceUsage is one namespace's read, once done is closed.
type namespaceUsage struct {
	done chan struct{}
	at   time.Time
	used map[string]usage.Usage
	err  error
}

// batchUsage is one read of several namespaces, once done is closed.
type batchUsage struct {
	namespaces []string
	once       sync.Once
	done       chan struct{}
	at         time.Time
	used       map[string]map[string]usage.Usage
	err        error
}

// newUsageMemo reads each namespace on its own (a check outside a round).
func newUsageMemo(u Usage) *usageMemo {
	return &usageMemo{u: u, ns: map[string]*namespaceUsage{}}
}

// newRoundMemo reads the namespaces nss in batches, waiting up to wait for
// a batch's read.
func newRoundMemo(u Usage, nss []string, wait time.Duration) *usageMemo {
	m := newUsageMemo(u)
	m.batches, m.wait = map[string]*batchUsage{}, wait
	for start := 0; start < len(nss); start += maxBatchNamespaces {
		b := &batchUsage{namespaces: nss[start:min(start+maxBatchNamespaces, len(nss))], done: make(chan struct{})}
		for _, ns := range b.namespaces {
			m.batches[ns] = b
		}
	}
	return m
}

// claims is the usage of namespace ns's claims and when it was read: from
// its batch's read when that answered, else read on its own. The first
// check of ns reads it; the others wait for that read or their own
// deadline, whichever comes first (a read that hangs holds up none of
// them past its deadline).
func (m *usageMemo) claims(ctx context.Context, ns string) (map[string]usage.Usage, time.Time, error) {
	if b := m.batches[ns]; b != nil {
		if used, at, ok := b.read(ctx, m.u, m.wait); ok {
			return used[ns], at, nil
		}
	}
	m.mu.Lock()
	r, read := m.ns[ns]
	if !read {
		r = &namespaceUsage{done: make(chan struct{}), at: time.Now()}
		m.ns[ns] = r
	}
	m.mu.Unlock()
	if !read {
		r.used, r.err = m.u.Claims(ctx, ns, r.at)
		close(r.done)
	}
	select {
	case <-r.done:
		return r.used, r.at, r.err
	case <-ctx.Done():
		return nil, time.Now(), ctx.Err()
	}
}

// read is b's usage once its read answered within wait (started by the
// first caller, under a deadline of its own: the caller's check may end
// first); false when it failed or did not answer in time.
func (b *batchUsage) read(ctx context.Context, u Usage, wait time.Duration) (map[string]map[string]usage.Usage, time.Time, bool) {
	b.once.Do(func() {
		b.at = time.Now()
		go func() {
			readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
			defer cancel()
			b.used, b.err = u.Namespaces(readCtx, b.namespaces, b.at)
			close(b.done)
		}()
	})
	// An answer counts however late it is asked for: a check late in a
	// long round finds it, not the timer that fired long ago.
	select {
	case <-b.done:
		return b.used, b.at, b.err == nil
	default:
	}
	timer := time.NewTimer(time.Until(b.at.Add(wait)))
	defer timer.Stop()
	select {
	case <-b.done:
		return b.used, b.at, b.err == nil
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil, time.Time{}, false
}
