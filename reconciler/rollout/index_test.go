package rollout

import (
	"slices"
	"testing"
)

func TestStatefulSetsNamedByAClaim(t *testing.T) {
	for claim, want := range map[string][]string{
		"data-web-0":          {"web"},
		"a-b-web-12":          {"b-web", "web"},
		"data-web":            nil, // no ordinal
		"data-web-01":         nil, // not an ordinal the StatefulSet controller prints
		"web-0":               nil, // no template
		"-web-0":              nil,
		"data--0":             nil,
		"data-web-2147483648": nil, // beyond int32
	} {
		if got := statefulSetsNamedBy(claim); !slices.Equal(got, want) {
			t.Errorf("statefulSetsNamedBy(%q) = %q, want %q", claim, got, want)
		}
	}
}
