package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README's least autoresize.interval is the one Validate accepts: it
// said 10s while 1s was accepted (and the end-to-end tests use 1s).
func TestAutoresizeIntervalAsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for line := range strings.SplitSeq(string(readme), "\n") {
		if strings.HasPrefix(line, "| `autoresize.interval` |") {
			row = line
		}
	}
	m := regexp.MustCompile("at least `([^`]+)`").FindStringSubmatch(row)
	if m == nil {
		t.Fatalf("the README's autoresize.interval row %q names no least interval", row)
	}
	least, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Autoresize.Interval = least
	if err := c.Validate(); err != nil {
		t.Errorf("the README's least interval %s: %v", least, err)
	}
	c.Autoresize.Interval = least - time.Millisecond
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "autoresize.interval") {
		t.Errorf("below the README's least interval, %s: %v, want refused", c.Autoresize.Interval, err)
	}
}
