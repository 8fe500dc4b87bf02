package controllerproc

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// WaitReady waits until /readyz, and /metrics when the process serves it,
// answer 200. The manager starts its health and metrics servers
// independently, so /readyz can answer before /metrics listens: a caller
// that scrapes right after WaitReady would otherwise meet a refused
// connection. It fails at once, with the log, when the process exits, and
// otherwise after timeout (or when ctx ends) with the log's tail.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A server that accepts the connection but never answers must not hold the
	// poll until its deadline.
	hc := &http.Client{Timeout: time.Second}
	checks := []func(context.Context) error{testenv.HTTPOK(hc, "http://"+p.HealthAddr+"/readyz")}
	if p.MetricsAddr != "" {
		checks = append(checks, testenv.HTTPOK(hc, "http://"+p.MetricsAddr+"/metrics"))
	}
	return testenv.Poll(ctx, p.Process, p.Name(), p.Exited, func(ctx context.Context) error {
		var errs []error
		for _, check := range checks {
			errs = append(errs, check(ctx))
		}
		return errors.Join(errs...)
	})
}
