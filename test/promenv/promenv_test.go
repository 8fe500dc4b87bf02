package promenv

import (
	"strings"
	"testing"
	"time"
)

// The scrape configuration names every target, quoted, in its job: the
// kubelet job claimwarden's default selector reads, labelled metrics_path
// as the Prometheus Operator does, and others honouring their targets'
// labels when asked; jobs of one name are one job of several groups of
// targets, each with its labels.
func TestScrapeConfig(t *testing.T) {
	got := scrapeConfig(2*time.Second, []Job{
		{Name: "kubelet", Targets: []string{"127.0.0.1:1", "127.0.0.1:2"}},
		{Name: "tenant", Targets: []string{"127.0.0.1:3"}, HonorLabels: true},
		{Name: "kubelet", Targets: []string{"127.0.0.1:4"}, Labels: map[string]string{"cluster": "eu"}},
	})
	for _, want := range []string{
		"scrape_interval: 2s",
		`job_name: "kubelet"
    honor_labels: false`,
		`targets: ["127.0.0.1:1", "127.0.0.1:2"]`,
		"target_label: metrics_path",
		`job_name: "tenant"
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:3"]`,
		`      - targets: ["127.0.0.1:1", "127.0.0.1:2"]
      - targets: ["127.0.0.1:4"]
        labels:
          cluster: "eu"
    relabel_configs:`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("scrape configuration lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, `job_name: "kubelet"`); n != 1 {
		t.Errorf("%d kubelet jobs, want 1 (Prometheus refuses two of one name):\n%s", n, got)
	}
}
