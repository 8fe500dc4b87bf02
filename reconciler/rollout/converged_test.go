package rollout_test

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// convergedCounter is the outcome.Sink of the tests: it counts, per
// StatefulSet, the Converged outcomes (what a tool's Nudger acts on).
type convergedCounter struct {
	mu       sync.Mutex
	counters map[types.NamespacedName]*atomic.Int32
}

// count makes n count the Converged outcomes of sts.
func (c *convergedCounter) count(sts types.NamespacedName, n *atomic.Int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counters == nil {
		c.counters = map[types.NamespacedName]*atomic.Int32{}
	}
	c.counters[sts] = n
}

func (c *convergedCounter) Publish(_ context.Context, o outcome.Outcome) {
	if o.Action != outcome.Converged {
		return
	}
	c.mu.Lock()
	n := c.counters[o.StatefulSet]
	c.mu.Unlock()
	if n != nil {
		n.Add(1)
	}
}

func (c *convergedCounter) Forget(types.NamespacedName) {}
