// Package promenv runs a real Prometheus (built by `make testenv` into
// bin/testenv/prometheus) on 127.0.0.1, scraping the targets a test gives
// it: the Prometheus HTTP API that usage is read from.
//
//	srv := promenv.StartT(t, time.Second, "127.0.0.1:41234")
//	api := v1.NewAPI(srv.Client(t))
//
// A program without a test (the demo) calls Start with a directory of its
// own, and Stop.
package promenv

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"

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

// Job is a scrape job: its targets' /metrics, every series labelled job
// Name, instance the target and metrics_path /metrics (as the Prometheus
// Operator's kubelet ServiceMonitor relabels it), and Labels. Jobs of one
// Name are one scrape job, each its own group of targets (the kubelets of
// several clusters, each group labelled with its cluster).
type Job struct {
	Name    string
	Targets []string
	// Labels are set on every series of Targets, as a target group's
	// labels (the cluster label an external label or a federation sets).
	Labels map[string]string
	// HonorLabels keeps the labels a target exposes (job, instance,
	// metrics_path included) over the ones above: a ServiceMonitor with
	// honorLabels, a Pushgateway. Jobs of one Name say the same.
	HonorLabels bool
}

// StartT starts Prometheus scraping each target's /metrics every interval
// (job "kubelet", as a cluster's kubelet job), in a directory of the test,
// and stops it when the test ends. It returns once Prometheus is ready.
func StartT(t *testing.T, interval time.Duration, targets ...string) *Server {
	t.Helper()
	return StartJobsT(t, interval, Job{Name: "kubelet", Targets: targets})
}

// StartJobsT is StartT with the scrape jobs given: the kubelet's and
// others (a tenant's exporter).
func StartJobsT(t *testing.T, interval time.Duration, jobs ...Job) *Server {
	t.Helper()
	s, err := start(t.TempDir(), interval, jobs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// Start is StartT for a program without a test (the demo): Prometheus keeps
// its configuration, data and log in dir and runs until Stop. It returns
// once Prometheus is ready; on error nothing is left running.
func Start(dir string, interval time.Duration, targets ...string) (*Server, error) {
	return start(dir, interval, []Job{{Name: "kubelet", Targets: targets}})
}

func start(dir string, interval time.Duration, jobs []Job) (*Server, error) {
	bin, err := testenv.BinDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ports, err := testenv.FreePorts(1)
	if err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte(scrapeConfig(interval, jobs)), 0o644); err != nil {
		return nil, err
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
		return nil, fmt.Errorf("starting prometheus (run make testenv): %w", err)
	}
	s := &Server{URL: "http://" + addr, proc: proc}
	if err := s.waitReady(); err != nil {
		err = fmt.Errorf("%w; prometheus log:\n%s", err, testenv.TailFile(proc.LogPath(), 30))
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop stops Prometheus, with a grace period to flush its head block.
func (s *Server) Stop() error { return s.proc.Stop(stopGrace) }

// Exited returns an error once Prometheus has stopped on its own (nil while
// it runs), so that a program waiting on it can fail at once.
func (s *Server) Exited() error { return s.proc.Exited() }

// LogPath is the file Prometheus logs to.
func (s *Server) LogPath() string { return s.proc.LogPath() }

// scrapeConfig is the configuration: every job's targets.
func scrapeConfig(interval time.Duration, jobs []Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  evaluation_interval: %s\nscrape_configs:\n", interval, interval)
	var names []string
	groups := map[string][]Job{}
	for _, j := range jobs {
		if _, ok := groups[j.Name]; !ok {
			names = append(names, j.Name)
		}
		groups[j.Name] = append(groups[j.Name], j)
	}
	for _, name := range names {
		fmt.Fprintf(&b, "  - job_name: %s\n    honor_labels: %t\n    static_configs:\n", strconv.Quote(name), groups[name][0].HonorLabels)
		for _, j := range groups[name] {
			quoted := make([]string, len(j.Targets))
			for i, t := range j.Targets {
				quoted[i] = strconv.Quote(t)
			}
			fmt.Fprintf(&b, "      - targets: [%s]\n", strings.Join(quoted, ", "))
			if len(j.Labels) > 0 {
				b.WriteString("        labels:\n")
				for _, k := range slices.Sorted(maps.Keys(j.Labels)) {
					fmt.Fprintf(&b, "          %s: %s\n", k, strconv.Quote(j.Labels[k]))
				}
			}
		}
		b.WriteString("    relabel_configs:\n      - source_labels: [__metrics_path__]\n        target_label: metrics_path\n")
	}
	return b.String()
}

// waitReady polls /-/ready until Prometheus answers 200.
func (s *Server) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	// No proxy: the server is on loopback.
	c := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	return testenv.Poll(ctx, s.proc, "prometheus", s.proc.Exited, testenv.HTTPOK(c, s.URL+"/-/ready"))
}

// Client is an API client of the server.
func (s *Server) Client(t *testing.T) api.Client {
	t.Helper()
	c, err := s.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NewClient is Client without a test.
func (s *Server) NewClient() (api.Client, error) {
	// No proxy: the server is on loopback.
	return api.NewClient(api.Config{Address: s.URL, RoundTripper: &http.Transport{Proxy: nil}})
}
