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

// WaitReady polls /readyz, and /metrics when the process serves it, until both
// answer 200. The manager starts its health and metrics servers independently,
// so /readyz can answer before /metrics listens: a caller that scrapes right
// after WaitReady would otherwise meet a refused connection. It fails at once,
// with the log, when the process exits, and otherwise after timeout (or when
// ctx ends) with the log's tail.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration) error {
	urls := []string{"http://" + p.HealthAddr + "/readyz"}
	if p.MetricsAddr != "" {
		urls = append(urls, "http://"+p.MetricsAddr+"/metrics")
	}
	// A server that accepts the connection but never answers must not hold the
	// poll until its deadline.
	hc := &http.Client{Timeout: time.Second}
	var exited error
	waiting := urls[0]
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		if exited = p.Exited(); exited != nil {
			return false, exited
		}
		for _, url := range urls {
			waiting = url
			ok, err := answers(ctx, hc, url)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	})
	switch {
	case err == nil:
		return nil
	case exited != nil:
		return fmt.Errorf("waiting for %s: %w", waiting, exited)
	default:
		return fmt.Errorf("%s is not ready at %s: %w; log %s:\n%s", p.Name(), waiting, err, p.LogPath(), testenv.TailFile(p.LogPath(), 20))
	}
}

// answers reports whether url answers 200; a refused or unanswered connection
// is not an error (the server is not listening yet).
func answers(ctx context.Context, hc *http.Client, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, nil
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}
