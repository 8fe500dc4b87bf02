package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The series selector is the kubelet's job by default, set in the file or
// by a flag, and refused at start-up, naming the key, when it is not
// label matchers or would let any series through.
func TestAutoresizeSeriesSelector(t *testing.T) {
	c, err := Load(nil, writeConfig(t, "autoresize:\n  prometheus:\n    seriesSelector: 'job=~\"kubelet|kubernetes-nodes\"'\n"), nil)
	if err != nil || c.Autoresize.Prometheus.SeriesSelector != `job=~"kubelet|kubernetes-nodes"` {
		t.Errorf("from the file: %q (%v)", c.Autoresize.Prometheus.SeriesSelector, err)
	}
	c, err = Load(parsedFlags(t, "--autoresize-prometheus-series-selector", `job="kubelet"`), "", nil)
	if err != nil || c.Autoresize.Prometheus.SeriesSelector != `job="kubelet"` {
		t.Errorf("from the flag: %q (%v)", c.Autoresize.Prometheus.SeriesSelector, err)
	}
	for yaml, wantErr := range map[string]string{
		"autoresize:\n  prometheus:\n    seriesSelector: ''\n":                     `autoresize.prometheus.seriesSelector: "" is not PromQL label matchers (comma-separated, without braces): is empty`,
		"autoresize:\n  prometheus:\n    seriesSelector: '{job=\"kubelet\"}'\n":    `autoresize.prometheus.seriesSelector: "{job=\"kubelet\"}" is not PromQL label matchers`,
		"autoresize:\n  prometheus:\n    seriesSelector: 'job=~\"(\"'\n":           `is not a regular expression`,
		"autoresize:\n  prometheus:\n    seriesSelector: 'namespace=\"shop\"'\n":   `the label namespace is claimwarden's to match`,
		"autoresize:\n  prometheus:\n    seriesSelector: 'job=\"kubelet\" or 1'\n": `after matcher 1: want a comma`,
	} {
		if _, err := Load(nil, writeConfig(t, yaml), nil); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: error %v, want one containing %s", yaml, err, wantErr)
		}
	}
}

// The configuration reference's least autoresize.interval is the one
// Validate accepts: it said 10s while 1s was accepted (and the end-to-end
// tests use 1s).
func TestAutoresizeIntervalAsDocumented(t *testing.T) {
	reference, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for line := range strings.SplitSeq(string(reference), "\n") {
		if strings.HasPrefix(line, "| `autoresize.interval` |") {
			row = line
		}
	}
	m := regexp.MustCompile("at least `([^`]+)`").FindStringSubmatch(row)
	if m == nil {
		t.Fatalf("docs/configuration.md's autoresize.interval row %q names no least interval", row)
	}
	least, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Autoresize.Interval = least
	if err := c.Validate(); err != nil {
		t.Errorf("the documented least interval %s: %v", least, err)
	}
	c.Autoresize.Interval = least - time.Millisecond
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "autoresize.interval") {
		t.Errorf("below the documented least interval, %s: %v, want refused", c.Autoresize.Interval, err)
	}
}
