// Package promenv runs a real Prometheus (built by `make testenv` into
// bin/testenv/prometheus) on 127.0.0.1, scraping the targets a test gives
// it: the Prometheus HTTP API that usage is read from.
//
//	srv := promenv.StartT(t, time.Second, "127.0.0.1:41234")
//	api := v1.NewAPI(srv.Client(t))
package promenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	binName      = "prometheus"
	startTimeout = time.Minute
	stopGrace    = 10 * time.Second
)

// Server is a running Prometheus.
type Server struct {
	// URL is its root, e.g. http://127.0.0.1:41235; the HTTP API is under /api/v1.
	URL  string
	proc *testenv.Process
}

// StartT starts Prometheus scraping each target's /metrics every interval
// (job "kubelet", as a cluster's kubelet job), in a directory of the test,
// and stops it when the test ends. It returns once Prometheus is ready.
func StartT(t *testing.T, interval time.Duration, targets ...string) *Server {
	t.Helper()
	bin, err := testenv.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ports, err := testenv.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte(scrapeConfig(interval, targets)), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	proc, err := testenv.StartProcess(testenv.ProcessOptions{
		Name:   "prometheus",
		Binary: filepath.Join(bin, binName),
		Args: []string{"--config.file", config, "--storage.tsdb.path", filepath.Join(dir, "data"),
			"--web.listen-address", addr, "--log.level", "warn"},
		Log: filepath.Join(dir, "prometheus.log"),
	})
	if err != nil {
		t.Fatalf("starting prometheus (run make testenv): %v", err)
	}
	s := &Server{URL: "http://" + addr, proc: proc}
	t.Cleanup(func() { _ = proc.Stop(stopGrace) })
	if err := s.waitReady(); err != nil {
		t.Fatalf("%v; prometheus log:\n%s", err, testenv.TailFile(proc.LogPath(), 30))
	}
	return s
}

// scrapeConfig is the configuration: every target in the job kubelet.
func scrapeConfig(interval time.Duration, targets []string) string {
	quoted := make([]string, len(targets))
	for i, t := range targets {
		quoted[i] = strconv.Quote(t)
	}
	return fmt.Sprintf(`global:
  scrape_interval: %s
  evaluation_interval: %s
scrape_configs:
  - job_name: kubelet
    static_configs:
      - targets: [%s]
`, interval, interval, strings.Join(quoted, ", "))
}

// waitReady polls /-/ready until Prometheus answers 200.
func (s *Server) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	// No proxy: the server is on loopback.
	c := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	return wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := s.proc.Exited(); err != nil {
			return false, fmt.Errorf("prometheus exited: %w", err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		if err != nil {
			return false, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// Client is an API client of the server.
func (s *Server) Client(t *testing.T) api.Client {
	t.Helper()
	c, err := api.NewClient(api.Config{Address: s.URL, RoundTripper: &http.Transport{Proxy: nil}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
