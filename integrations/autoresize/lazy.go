package autoresize

import (
	"context"
	"sync"
)

// lazy is a value computed by the first caller that asks for it, while
// the others wait for it or their context's end; an error is not kept,
// so the next caller computes again. Hand-written: singleflight shares a
// call in flight, not its answer once it returned, and hands every waiter
// the first caller's error, the end of that caller's own deadline too.
type lazy[T any] struct {
	mu     sync.Mutex
	asking chan struct{}
	value  T
	ok     bool
}

func (l *lazy[T]) get(ctx context.Context, compute func() (T, error)) (T, error) {
	for {
		l.mu.Lock()
		if l.ok {
			defer l.mu.Unlock()
			return l.value, nil
		}
		if wait := l.asking; wait != nil {
			l.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				var zero T
				return zero, ctx.Err()
			}
		}
		asking := make(chan struct{})
		l.asking = asking
		l.mu.Unlock()
		v, err := compute()
		l.mu.Lock()
		l.asking = nil
		if err == nil {
			l.value, l.ok = v, true
		}
		l.mu.Unlock()
		close(asking)
		return v, err
	}
}
