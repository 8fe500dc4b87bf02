package commitstatus

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStatusKey(t *testing.T) {
	fits := strings.Repeat("k", 40)
	if got := statusKey(fits, 40); got != fits {
		t.Errorf("a 40-byte context became %q", got)
	}
	long := "claimwarden/production/postgres-primary-0"
	got := statusKey(long, 40)
	// The documented example (text.go) is this exact value.
	if want := "claimwarden/production/postgr-d9b70c5971"; got != want {
		t.Errorf("statusKey(%q) = %q, want %q", long, got, want)
	}
	if len(got) != 40 || statusKey(long, 40) != got {
		t.Errorf("key %q: want 40 bytes, the same every time", got)
	}
	if other := statusKey(long+"1", 40); other == got {
		t.Errorf("contexts sharing a prefix got the same key %q", got)
	}
	// A multi-byte character at the cut is not split.
	multi := strings.Repeat("a", 28) + "ééé" + strings.Repeat("b", 20)
	k := statusKey(multi, 40)
	if !utf8.ValidString(k) || len(k) > 40 {
		t.Errorf("statusKey(%q) = %q (%d bytes): invalid UTF-8 or too long", multi, k, len(k))
	}
}

func TestStatusContext(t *testing.T) {
	if got := StatusContext("claimwarden/prod-eu", "shop", "web"); got != "claimwarden/prod-eu/shop/web" {
		t.Errorf("StatusContext = %q, want claimwarden/prod-eu/shop/web", got)
	}
}
