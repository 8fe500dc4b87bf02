package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTiers(t *testing.T) {
	got, err := parseTiers("200x3/10, 2000x3/1@3,200x3/10@3+crowd")
	if err != nil {
		t.Fatal(err)
	}
	want := []tier{{statefulSets: 200, replicas: 3, namespaces: 10}, {statefulSets: 2000, replicas: 3, namespaces: 1, concurrency: 3},
		{statefulSets: 200, replicas: 3, namespaces: 10, concurrency: 3, crowd: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseTiers = %+v, want %+v", got, want)
	}
	if s := got[1].String(); s != "2000x3/1@3" {
		t.Errorf("String() = %q", s)
	}
	if s := got[2].String(); s != "200x3/10@3+crowd" {
		t.Errorf("String() = %q", s)
	}
	for _, bad := range []string{"", "200x3", "200/10", "0x3/1", "10x3/20", "10x3/2@0", "10x3/2@x", "ax3/1", "10x3/2+crowd@3", "10x3/2+crow"} {
		if _, err := parseTiers(bad); err == nil || !strings.Contains(err.Error(), "STATEFULSETSxREPLICAS") {
			t.Errorf("parseTiers(%q) = %v, want an error saying the form", bad, err)
		}
	}
}

func TestTierOut(t *testing.T) {
	tr := tier{statefulSets: 2000, replicas: 3, namespaces: 20, concurrency: 3}
	if got := tierOut("r/report.json", tr, 1); got != "r/report.json" {
		t.Errorf("one tier: %q", got)
	}
	if got := tierOut("r/report.json", tr, 3); got != "r/report-2000x3ns20@3.json" {
		t.Errorf("several tiers: %q", got)
	}
	if got := tierOut("", tr, 3); got != "" {
		t.Errorf("no -out: %q", got)
	}
	// Runs of one tier must not overwrite each other's reports.
	runs := repeated([]tier{tr}, 2)
	if a, b := tierOut("r.json", runs[0], 2), tierOut("r.json", runs[1], 2); a != "r-2000x3ns20@3-run1.json" || b != "r-2000x3ns20@3-run2.json" {
		t.Errorf("runs of a tier: %q and %q", a, b)
	}
}

func TestRepeatedTiersPrintTheirMedian(t *testing.T) {
	tiers := repeated([]tier{{statefulSets: 200, replicas: 3, namespaces: 10}, {statefulSets: 2000, replicas: 3, namespaces: 20, concurrency: 3}}, 3)
	if len(tiers) != 6 || tiers[2].name() != "200x3/10 run 3/3" || tiers[3].name() != "2000x3/20@3 run 1/3" {
		t.Fatalf("repeated: %+v", tiers)
	}
	rep := func(timeRatio, requestRatio float64) *Report {
		r := &Report{}
		r.Bump.AllReadySeconds, r.Manual.Seconds = 10, 10
		r.Manual.TimeRatio, r.Manual.RequestRatio = timeRatio, requestRatio
		return r
	}
	// The second tier's first run failed: its median is of the other two.
	reps := []*Report{rep(1.8, 1.5), rep(1.2, 1.4), rep(1.5, 1.6), nil, rep(1.1, 1.5), rep(1.04, 1.52)}
	var b strings.Builder
	printMedians(&b, tiers, reps)
	want := "200x3/10: claimwarden / manual, median of 3 runs: time 1.50 (1.80, 1.20, 1.50), requests 1.50 (1.50, 1.40, 1.60)\n" +
		"2000x3/20@3: claimwarden / manual, median of 2 runs: time 1.07 (1.10, 1.04), requests 1.51 (1.50, 1.52)\n"
	if b.String() != want {
		t.Errorf("medians:\n%s\nwant\n%s", b.String(), want)
	}
}
