package main

import (
	"strings"
	"testing"
	"time"
)

func TestPrintTable(t *testing.T) {
	rows := []row{
		{Spokes: 0, CacheSync: 1500 * time.Millisecond, PeakRSS: 100 << 10, RestRSS: 80 << 10, HeapInuse: 20 << 20, Goroutines: 100, HubWatches: 9, LoadBefore: "1.0", LoadAfter: "1.2"},
		{Spokes: 2, CacheSync: 2 * time.Second, PeakRSS: 120 << 10, RestRSS: 90 << 10, HeapInuse: 24 << 20, Goroutines: 160, HubWatches: 9,
			SpokeWatches: []int{8, 9}, APIServerWatches: 17, SpokeConns: 2, SpokeRequests: 40, LoadBefore: "1.2", LoadAfter: "1.1"},
	}
	var b strings.Builder
	printTable(&b, rows)
	out := b.String()
	for _, want := range []string{
		"| 0 | 1.5 s | 100.0 MiB | 80.0 MiB | 20.0 MiB | 100 | 9 | - | 0 | 0 | 0 | 0 | 1.0/1.2 |",
		"| 2 | 2.0 s | 120.0 MiB | 90.0 MiB | 24.0 MiB | 160 | 9 | 8–9 | 17 | 2 | 40 | 0 | 1.2/1.1 |",
		"per spoke at N=2 over N=0: RSS at rest +5.0 MiB, peak RSS +10.0 MiB, heap +2.0 MiB, +30 goroutines",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

func TestSummary(t *testing.T) {
	ms := time.Millisecond
	if got, want := summary([]time.Duration{30 * ms, 10 * ms, 20 * ms}), "n=3 min 10 ms, median 20 ms, max 30 ms (rounds: 30, 10, 20)"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	if got := summary(nil); got != "none" {
		t.Errorf("summary(nil) = %q, want none", got)
	}
}
