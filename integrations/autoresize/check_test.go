package autoresize

import (
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
