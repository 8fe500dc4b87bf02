package benchkit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeProcess is a controller that runs until exit is called.
type fakeProcess struct {
	done chan struct{}
	err  error
}

func newFakeProcess() *fakeProcess { return &fakeProcess{done: make(chan struct{})} }

func (p *fakeProcess) exit(err error) {
	p.err = err
	close(p.done)
}

func (p *fakeProcess) Done() <-chan struct{} { return p.done }

func (p *fakeProcess) Exited() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

func TestObserve(t *testing.T) {
	ctx := context.Background()
	if err := Observe(ctx, newFakeProcess(), time.Millisecond); err != nil {
		t.Errorf("a window with the controller alive: %v", err)
	}
	dead := newFakeProcess()
	crash := errors.New("exit status 2")
	dead.exit(crash)
	if err := Observe(ctx, dead, time.Hour); !errors.Is(err, crash) {
		t.Errorf("a controller that exited: %v, want its exit", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := Observe(canceled, newFakeProcess(), time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("an ended run: %v, want context.Canceled", err)
	}
}

func TestPoll(t *testing.T) {
	ctx := context.Background()
	calls := 0
	err := Poll(ctx, newFakeProcess(), time.Millisecond, "the third call", func(context.Context) (bool, error) {
		calls++
		return calls == 3, nil
	})
	if err != nil || calls != 3 {
		t.Errorf("Poll = %v after %d calls, want nil after 3", err, calls)
	}

	dead := newFakeProcess()
	crash := errors.New("exit status 2")
	dead.exit(crash)
	err = PollAfter(ctx, dead, time.Millisecond, "the caches to sync", func(context.Context) (bool, error) {
		t.Error("check called with the controller gone")
		return true, nil
	})
	if !errors.Is(err, crash) || !strings.Contains(err.Error(), "waiting for the caches to sync") {
		t.Errorf("PollAfter on a dead controller = %v, want its exit and what was waited for", err)
	}

	timeout, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	err = Poll(timeout, newFakeProcess(), time.Millisecond, "never", func(context.Context) (bool, error) { return false, nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Poll past the deadline = %v, want context.DeadlineExceeded", err)
	}
}
