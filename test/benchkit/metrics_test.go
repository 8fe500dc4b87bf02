package benchkit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

func TestSum(t *testing.T) {
	fams, err := ParseMetrics(strings.NewReader(`# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{resource="pods",verb="WATCH"} 7
apiserver_longrunning_requests{resource="statefulsets",verb="WATCH"} 3
apiserver_longrunning_requests{resource="pods",verb="CONNECT"} 2
# TYPE rest_client_requests_total counter
rest_client_requests_total{method="GET"} 4
`))
	if err != nil {
		t.Fatal(err)
	}
	watches := func(m *dto.Metric) bool { return Label(m, "verb") == "WATCH" }
	if n := Sum(fams["apiserver_longrunning_requests"], watches); n != 10 {
		t.Errorf("WATCH sum = %v, want 10", n)
	}
	if n := Sum(fams["apiserver_longrunning_requests"], nil); n != 12 {
		t.Errorf("sum = %v, want 12", n)
	}
	if n := Sum(fams["rest_client_requests_total"], nil); n != 4 {
		t.Errorf("counter sum = %v, want 4", n)
	}
	if n := Sum(fams["go_goroutines"], nil); n != 0 {
		t.Errorf("an absent family sums to %v, want 0", n)
	}
}

// TestScrape reads what promhttp serves, as the controller's /metrics does,
// and fails on another status.
func TestScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "go_goroutines", Help: "goroutines"})
	g.Set(42)
	reg.MustRegister(g)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	fams, err := Scrape(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if n := Sum(fams["go_goroutines"], nil); n != 42 {
		t.Errorf("go_goroutines = %v, want 42", n)
	}

	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	if _, err := Scrape(context.Background(), broken.URL); err == nil || !strings.Contains(err.Error(), broken.URL) {
		t.Errorf("a 500 scraped: %v; want an error naming the URL", err)
	}
}
