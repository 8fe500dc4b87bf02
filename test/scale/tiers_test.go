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
	tr := tier{statefulSets: 2000, replicas: 3, namespaces: 20, concurrency: 3}.String()
	if got := tierOut("r/report.json", tr, 1); got != "r/report.json" {
		t.Errorf("one tier: %q", got)
	}
	if got := tierOut("r/report.json", tr, 3); got != "r/report-2000x3ns20@3.json" {
		t.Errorf("several tiers: %q", got)
	}
	if got := tierOut("", tr, 3); got != "" {
		t.Errorf("no -out: %q", got)
	}
}
