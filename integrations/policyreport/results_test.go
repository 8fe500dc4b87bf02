package policyreport

import (
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// A rollout's results: a fail per denying policy, in the order they
// denied, with each policy's messages; claimwarden's own fail when the
// proposer may not make the change (no denials); a pass while allowed
// and under way, whatever its progress says (a message that changed with
// each step would be a write per step); messages bounded.
func TestResultsOf(t *testing.T) {
	now := time.Unix(1796637600, 0)
	long := strings.Repeat("x", 5000)
	for _, c := range []struct {
		name string
		o    outcome.Outcome
		want []string // policy result, each
	}{
		{"denied by two policies", reconciled("shop", "big", outcome.Failure, "",
			outcome.Denial{Policy: "max-step", Message: "a"}, outcome.Denial{Policy: "quota-fits", Message: "b"}, outcome.Denial{Policy: "max-step", Message: "c"}),
			[]string{"max-step fail a; c", "quota-fits fail b"}},
		{"not authorized", reconciled("shop", "big", outcome.Failure, "the Kustomization's account may not patch the claims"),
			[]string{"claimwarden fail the Kustomization's account may not patch the claims"}},
		{"under way", reconciled("shop", "big", outcome.Pending, "1/3 claims compatible"),
			[]string{"claimwarden pass the policies allow the proposal"}},
		{"done", reconciled("shop", "big", outcome.Success, "every claim is compatible"),
			[]string{"claimwarden pass the policies allow the proposal"}},
		{"a long message", reconciled("shop", "big", outcome.Error, long),
			[]string{"claimwarden error " + long[:maxMessage-1] + "…"}},
	} {
		var got []string
		for _, r := range resultsOf(c.o, now) {
			got = append(got, r.Policy+" "+string(r.Result)+" "+r.Description)
			if r.Timestamp.Seconds != now.Unix() || r.Subjects[0].Name != "big" || r.Source != Source {
				t.Errorf("%s: result %+v", c.name, r)
			}
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: results\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}
