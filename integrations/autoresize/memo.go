package autoresize

import (
	"context"
	"sync"
	"time"

	"github.com/claimwarden/claimwarden/integrations/usage"
)

// usageMemo reads the usage of each namespace once: a round asks
// Prometheus once per namespace, not once per StatefulSet.
type usageMemo struct {
	u  Usage
	mu sync.Mutex
	ns map[string]*namespaceUsage
}

// namespaceUsage is one namespace's read, once done is closed.
type namespaceUsage struct {
	done chan struct{}
	at   time.Time
	used map[string]usage.Usage
	err  error
}

func newUsageMemo(u Usage) *usageMemo {
	return &usageMemo{u: u, ns: map[string]*namespaceUsage{}}
}

// claims is the usage of namespace ns's claims and when it was read. The
// first check of ns reads it; the others wait for that read or their own
// deadline, whichever comes first (a read that hangs holds up none of them
// past its deadline).
func (m *usageMemo) claims(ctx context.Context, ns string) (map[string]usage.Usage, time.Time, error) {
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
