package benchkit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// scrapeTimeout bounds one scrape: a controller that stops answering fails
// the wait that scrapes it instead of stalling the run.
const scrapeTimeout = 10 * time.Second

// Scrape reads a /metrics endpoint served over plain HTTP (the
// controller's). Without an Accept header promhttp answers in the text
// format ParseMetrics reads; testenv.HTTPGet bounds the body.
func Scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	body, err := testenv.HTTPGet(ctx, http.DefaultClient, url)
	if err != nil {
		return nil, fmt.Errorf("scraping metrics: %w", err)
	}
	fams, err := ParseMetrics(strings.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", url, err)
	}
	return fams, nil
}

// ParseMetrics reads Prometheus' text format into metric families by name.
func ParseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(r)
}

// Filter picks the series of a family to count; nil picks every one.
type Filter func(*dto.Metric) bool

// Sum adds the values of f's series that keep picks. An absent family (nil)
// sums to 0.
func Sum(f *dto.MetricFamily, keep Filter) float64 {
	var n float64
	for _, m := range f.GetMetric() {
		if keep == nil || keep(m) {
			n += Value(m)
		}
	}
	return n
}

// Value is a series' counter, gauge or untyped value; 0 for a histogram or
// summary.
func Value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

// Label is the value of a series' label name, "" when it has none.
func Label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
