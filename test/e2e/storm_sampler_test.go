package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// rolloutQueue is the rollout controller's name in controller-runtime's
// workqueue metrics.
const rolloutQueue = "volumeclaimrollout"

// sample is what the controller says of its own load at one instant.
type sample struct {
	pending    float64 // claimwarden_commit_statuses_pending
	heapInuse  float64 // go_memstats_heap_inuse_bytes
	queueDepth float64 // workqueue_depth of the rollout controller
}

// sampler scrapes a controller's /metrics every second until stopped, and
// keeps the peaks: a storm must leave the commit-status backlog, the heap
// and the rollout queue bounded.
type sampler struct {
	url  string
	stop context.CancelFunc
	done chan struct{}

	mu    sync.Mutex
	n     int
	first sample
	peak  sample
	last  sample
	err   error // the last scrape error; scrapes go on
}

func startSampler(c *controller) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{url: "http://" + c.MetricsAddr + "/metrics", stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			s.scrape(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) scrape(ctx context.Context) {
	got, err := scrapeSample(ctx, s.url)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = err
		return
	}
	if s.n == 0 {
		s.first = got
	}
	s.n++
	s.last = got
	s.peak = sample{max(s.peak.pending, got.pending), max(s.peak.heapInuse, got.heapInuse), max(s.peak.queueDepth, got.queueDepth)}
}

// finish stops the sampler and returns the number of samples, the first,
// the peaks and the last.
func (s *sampler) finish() (n int, first, peak, last sample, err error) {
	s.stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		return 0, sample{}, sample{}, sample{}, fmt.Errorf("no scrape of %s succeeded: %v", s.url, s.err)
	}
	return s.n, s.first, s.peak, s.last, nil
}

func scrapeSample(ctx context.Context, url string) (sample, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return sample{}, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sample{}, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return sample{}, err
	}
	var out sample
	var missing []string
	for name, dst := range map[string]*float64{
		"claimwarden_commit_statuses_pending": &out.pending,
		"go_memstats_heap_inuse_bytes":        &out.heapInuse,
		"workqueue_depth":                     &out.queueDepth,
	} {
		v, ok := gaugeOf(fams[name])
		if !ok {
			missing = append(missing, name)
		}
		*dst = v
	}
	if len(missing) > 0 {
		return sample{}, fmt.Errorf("%s has no %v", url, missing)
	}
	return out, nil
}

// gaugeOf is the family's value: the rollout controller's series for
// workqueue metrics, the only series otherwise.
func gaugeOf(f *dto.MetricFamily) (float64, bool) {
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		if len(m.Label) > 0 && !hasLabelValue(m, rolloutQueue) {
			continue
		}
		if m.Gauge != nil {
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

func hasLabelValue(m *dto.Metric, v string) bool {
	for _, l := range m.Label {
		if l.GetValue() == v && (l.GetName() == "name" || l.GetName() == "controller") {
			return true
		}
	}
	return false
}
