package diff

import (
	"math"
	"testing"
)

func TestSplitOrdinal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stem    string
		ordinal int32
		ok      bool
	}{
		{name: "web-0", stem: "web", ordinal: 0, ok: true},
		{name: "data-web-12", stem: "data-web", ordinal: 12, ok: true},
		{name: "a-2147483647", stem: "a", ordinal: math.MaxInt32, ok: true},
		// The last dash cuts: the ordinal is 1, never -1, and the stem
		// is for the caller to match against a StatefulSet's name.
		{name: "a--1", stem: "a-", ordinal: 1, ok: true},
		// Not as strconv prints an ordinal.
		{name: "a-01"},
		{name: "a-00"},
		{name: "a-+1"},
		{name: "a- 1"},
		{name: "a-1x"},
		{name: "a-2147483648"},
		{name: "a-99999999999999999999"},
		// No ordinal or no stem.
		{name: "a-"},
		{name: "-1"},
		{name: "a"},
		{name: "1"},
		{name: ""},
	} {
		stem, ordinal, ok := SplitOrdinal(tc.name)
		if stem != tc.stem || ordinal != tc.ordinal || ok != tc.ok {
			t.Errorf("SplitOrdinal(%q) = %q, %d, %v; want %q, %d, %v", tc.name, stem, ordinal, ok, tc.stem, tc.ordinal, tc.ok)
		}
	}
}

func TestTemplateOf(t *testing.T) {
	for _, tc := range []struct {
		claim, sts string
		template   string
		ok         bool
	}{
		{claim: "data-web-0", sts: "web", template: "data", ok: true},
		{claim: "my-data-web-3", sts: "web", template: "my-data", ok: true},
		{claim: "data-my-web-3", sts: "my-web", template: "data", ok: true},
		// The same name, read for another StatefulSet.
		{claim: "data-my-web-3", sts: "web", template: "data-my", ok: true},
		{claim: ClaimName("a-b", "c-d", math.MaxInt32), sts: "c-d", template: "a-b", ok: true},
		{claim: "web-0", sts: "web"},
		{claim: "-web-0", sts: "web"},
		{claim: "data-web-01", sts: "web"},
		{claim: "data-web-+1", sts: "web"},
		{claim: "data-web--1", sts: "web"},
		{claim: "data-web-2147483648", sts: "web"},
		{claim: "data-web-", sts: "web"},
		{claim: "data-web", sts: "web"},
		{claim: "data-web2-0", sts: "web"},
		{claim: "data-xweb-0", sts: "web"},
	} {
		template, ok := TemplateOf(tc.claim, tc.sts)
		if template != tc.template || ok != tc.ok {
			t.Errorf("TemplateOf(%q, %q) = %q, %v; want %q, %v", tc.claim, tc.sts, template, ok, tc.template, tc.ok)
		}
	}
}

func TestPodOrdinal(t *testing.T) {
	for _, tc := range []struct {
		sts, pod string
		ordinal  int32
		ok       bool
	}{
		{sts: "web", pod: "web-0", ordinal: 0, ok: true},
		{sts: "web", pod: "web-3", ordinal: 3, ok: true},
		{sts: "my-web", pod: "my-web-1", ordinal: 1, ok: true},
		{sts: "web", pod: "web-2147483647", ordinal: math.MaxInt32, ok: true},
		{sts: "web", pod: "web-03"},
		{sts: "web", pod: "web-+3"},
		{sts: "web", pod: "web--1"},
		{sts: "web", pod: "web-2147483648"},
		{sts: "web", pod: "my-web-1"},
		{sts: "my-web", pod: "web-1"},
		{sts: "web", pod: "web-"},
		{sts: "web", pod: "web"},
		{sts: "web", pod: "web-0-1"},
	} {
		ordinal, ok := PodOrdinal(tc.sts, tc.pod)
		if ordinal != tc.ordinal || ok != tc.ok {
			t.Errorf("PodOrdinal(%q, %q) = %d, %v; want %d, %v", tc.sts, tc.pod, ordinal, ok, tc.ordinal, tc.ok)
		}
	}
}
