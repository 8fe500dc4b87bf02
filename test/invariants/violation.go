package invariants

import (
	"fmt"
	"strings"
	"time"
)

// Rule names one invariant.
type Rule string

const (
	RequestLowered  Rule = "request-lowered"
	ClaimDeleted    Rule = "claim-deleted"
	PodRestarted    Rule = "pod-restarted"
	RevisionLost    Rule = "revision-lost"
	StatefulSetGone Rule = "statefulset-absent"
	RepeatedPatch   Rule = "repeated-patch"
	CommitStatuses  Rule = "commit-statuses"
)

// Violation is one broken invariant.
type Violation struct {
	Rule   Rule
	Object string // kind namespace/name
	At     time.Time
	Detail string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s: %s (%s)", v.Rule, v.Object, v.Detail, v.At.Format("15:04:05.000"))
}

// Error is what Check returns when something was lost or damaged.
type Error struct{ Violations []Violation }

func (e *Error) Error() string {
	lines := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		lines[i] = v.String()
	}
	return fmt.Sprintf("%d invariant violation(s):\n%s", len(e.Violations), strings.Join(lines, "\n"))
}

// Rules returns the distinct rules broken, in the order first broken.
func (e *Error) Rules() []Rule {
	var out []Rule
	seen := map[Rule]bool{}
	for _, v := range e.Violations {
		if !seen[v.Rule] {
			seen[v.Rule] = true
			out = append(out, v.Rule)
		}
	}
	return out
}
