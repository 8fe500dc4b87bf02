package promenv

import (
	"strings"
	"testing"
	"time"
)

// The scrape configuration names every target, quoted, in the kubelet job
// claimwarden's queries read.
func TestScrapeConfig(t *testing.T) {
	got := scrapeConfig(2*time.Second, []string{"127.0.0.1:1", "127.0.0.1:2"})
	for _, want := range []string{
		"scrape_interval: 2s",
		"job_name: kubelet",
		`targets: ["127.0.0.1:1", "127.0.0.1:2"]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("scrape configuration lacks %q:\n%s", want, got)
		}
	}
}
