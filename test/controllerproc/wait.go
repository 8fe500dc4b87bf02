package controllerproc

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// WaitReady polls /readyz until it answers 200. It fails at once, with the log,
// when the process exits, and otherwise after timeout (or when ctx ends) with the
// log's tail.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration) error {
	url := "http://" + p.HealthAddr + "/readyz"
	// A server that accepts the connection but never answers must not hold the
	// poll until its deadline.
	hc := &http.Client{Timeout: time.Second}
	var exited error
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		if exited = p.Exited(); exited != nil {
			return false, exited
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, nil // not listening yet
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	switch {
	case err == nil:
		return nil
	case exited != nil:
		return fmt.Errorf("waiting for /readyz: %w", exited)
	default:
		return fmt.Errorf("%s is not ready at %s: %w; log %s:\n%s", p.Name(), url, err, p.LogPath(), testenv.TailFile(p.LogPath(), 20))
	}
}
