package benchkit

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Process is the running controller a wait watches (a controllerproc.Process).
type Process interface {
	Done() <-chan struct{}
	// Exited is nil while it runs, else why it ended.
	Exited() error
}

// Observe lets d pass while p stays alive: a measurement window, not a
// wait for something to happen.
func Observe(ctx context.Context, p Process, d time.Duration) error {
	end := time.NewTimer(d)
	defer end.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.Done():
		return p.Exited()
	case <-end.C:
		return nil
	}
}

// Poll calls check at once and then every interval until it returns true
// or an error, p exits, or ctx ends; the error says what was waited for.
func Poll(ctx context.Context, p Process, interval time.Duration, what string, check func(context.Context) (bool, error)) error {
	return poll(ctx, p, interval, true, what, check)
}

// PollAfter is Poll without the immediate first call: the first check
// comes one interval after the call.
func PollAfter(ctx context.Context, p Process, interval time.Duration, what string, check func(context.Context) (bool, error)) error {
	return poll(ctx, p, interval, false, what, check)
}

func poll(ctx context.Context, p Process, interval time.Duration, immediate bool, what string, check func(context.Context) (bool, error)) error {
	err := wait.PollUntilContextCancel(ctx, interval, immediate, func(ctx context.Context) (bool, error) {
		// A dead controller fails the wait at once, with why it ended.
		if err := p.Exited(); err != nil {
			return false, err
		}
		return check(ctx)
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}
