package benchkit

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// InterruptContext ends at the first Ctrl-C or SIGTERM, so the run stops
// what it started. Then the default action comes back, so a second one
// kills the run at once. stop releases the signals.
func InterruptContext() (ctx context.Context, stop context.CancelFunc) {
	ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
