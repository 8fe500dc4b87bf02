package rollout

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

func grow(name, from, to string) diff.ClaimChange {
	f, t := resource.MustParse(from), resource.MustParse(to)
	return diff.ClaimChange{Name: name, RequestFrom: f, RequestTo: t, FromBytes: f.Value(), ToBytes: t.Value()}
}

func TestDescribeStep(t *testing.T) {
	same := []diff.ClaimChange{grow("data-db-0", "1Gi", "2Gi"), grow("data-db-1", "1Gi", "2Gi")}
	if got, want := describeStep(same), "patched 2 PVCs data-db-0, data-db-1: storage 1Gi → 2Gi"; got != want {
		t.Errorf("same change: %q, want %q", got, want)
	}
	mixed := []diff.ClaimChange{grow("data-db-0", "1Gi", "2Gi"), grow("logs-db-0", "5Gi", "8Gi")}
	if got, want := describeStep(mixed), "2 PVCs: patched PVC data-db-0: storage 1Gi → 2Gi; patched PVC logs-db-0: storage 5Gi → 8Gi"; got != want {
		t.Errorf("changes that differ: %q, want %q", got, want)
	}
	// A step as wide as --max-concurrent-patches allows still fits an event.
	var wide []diff.ClaimChange
	for i := range 200 {
		wide = append(wide, grow(fmt.Sprintf("data-a-rather-long-statefulset-name-%d", i), "1Gi", fmt.Sprintf("%dGi", 2+i%2)))
	}
	got := describeStep(wide)
	if len(got) > maxEventNote || !utf8.ValidString(got) || !strings.HasSuffix(got, "… (200 PVCs in all)") {
		t.Errorf("a step of 200 claims: %d bytes, valid UTF-8 %v, ends %q; want at most %d, valid, saying how many",
			len(got), utf8.ValidString(got), got[max(0, len(got)-40):], maxEventNote)
	}
}
