package plan

import (
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

func TestUnsupportedClassIsNamedOnTheClaimAndInTheSummary(t *testing.T) {
	gold, silver := "gold", "silver"
	claims := []diff.ClaimChange{
		{Name: "data-web-0", Compatible: true, VACUnsupported: &gold},
		{Name: "data-web-1", Compatible: true, VACUnsupported: &gold},
		{Name: "logs-web-0", Compatible: true, VACUnsupported: &silver},
		{Name: "logs-web-1", Compatible: true},
	}
	p := Build(diff.Result{Claims: claims}, Options{})
	if !p.Done {
		t.Errorf("plan not done: a class the server cannot apply is not waited for")
	}
	want := "volume attributes class gold not applied to data-web-0, data-web-1; silver not applied to logs-web-0 (" + vacUnsupportedWhy + ")"
	if p.Unsupported != want {
		t.Errorf("Unsupported:\n%q\nwant\n%q", p.Unsupported, want)
	}
	if msg := p.Steps[0].Message; !strings.Contains(msg, "volume attributes class gold not applied: this API server serves no VolumeAttributesClasses") {
		t.Errorf("claim message %q, want the class named as not applied", msg)
	}
	if msg := p.Steps[3].Message; msg != "compatible" {
		t.Errorf("claim without a class: %q, want only compatible", msg)
	}
	if s := unsupportedSummary(p.Steps[3:]); s != "" {
		t.Errorf("no unsupported claim: %q, want empty", s)
	}
}
