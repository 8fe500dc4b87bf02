package main

import "testing"

// The usage the story waits for in status.autoresize is rounded as
// claimwarden rounds it: 900Mi is 88% of 1Gi and 44% of 2Gi.
func TestUsedPercent(t *testing.T) {
	if got := usedPercent(sizeBefore); got != "88%" {
		t.Errorf("usedPercent(%s) = %q, want 88%%", sizeBefore, got)
	}
	if got := usedPercent(sizeAfter); got != "44%" {
		t.Errorf("usedPercent(%s) = %q, want 44%%", sizeAfter, got)
	}
}
