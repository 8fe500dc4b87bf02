package autoresize

import (
	"strings"
	"testing"
	"time"
)

// The status says which claims were not decided on, and why, before what
// was decided of the others.
func TestNothingTextNamesUndecidedClaims(t *testing.T) {
	now := time.Now()
	if got, want := nothingText(nil, nil, nil, now), "no claim needs to grow"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	got := nothingText(nil, []string{"data-web-0: 2 series disagree", "data-web-1: a capacity not its own"}, nil, now)
	if want := "no decision for data-web-0: 2 series disagree; data-web-1: a capacity not its own; no other claim needs to grow"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// The body of a rebuilt pull request names the commit its branch held, and
// the one claimwarden made when it recorded one.
func TestRebuiltText(t *testing.T) {
	if got := rebuiltText("f00", "c0ffee"); !strings.Contains(got, "The branch was rebuilt: it held commit f00 that claimwarden did not make (it made c0ffee).") {
		t.Errorf("rebuiltText(f00, c0ffee) = %q", got)
	}
	if got := rebuiltText("f00", ""); !strings.Contains(got, "it held commit f00, which claimwarden has no record of making") {
		t.Errorf("rebuiltText(f00, none) = %q", got)
	}
	if got := rebuiltText("", "c0ffee"); got != "" {
		t.Errorf("no head known: %q, want nothing said", got)
	}
}
