// Package plan decides what a rollout does next with a StatefulSet's claims,
// following KEP-4650: highest ordinal first, from the StatefulSet's
// rolling-update partition up (under updateStrategy OnDelete, as their Pods
// are re-created), a bounded number of claims in flight, patch what can be
// patched (and lower a failed expansion's request to recover, KEP-1790),
// stop on failures. It is pure: the
// controller performs the patches and calls Build again on the next diff.
package plan

import (
	"cmp"
	"slices"
	"strings"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// Options tune a plan.
type Options struct {
	// Strategy is InPlace or OnClaimDelete; any other value patches nothing,
	// so that a mistyped strategy never touches volumes.
	Strategy v1alpha1.UpdateStrategy
	// MaxConcurrent bounds the claims in flight (being patched, resizing or
	// failed); values below 1 mean 1.
	MaxConcurrent int
	// PolicyDenied maps claim names to the policies' denial. A denied claim is
	// not patched, and any denial stops every patch of the StatefulSet: the
	// organisation's guardrails decide the whole proposal.
	PolicyDenied map[string]string
	// Partition holds the claims below the StatefulSet's rolling-update
	// partition (see PartitionOf).
	Partition Partition
	// OnDelete holds the claims whose Pod an OnDelete StatefulSet has not
	// re-created yet (see OnDeleteOf).
	OnDelete OnDelete
}

// Step is one claim and where it stands.
type Step struct {
	Claim   diff.ClaimChange
	Phase   v1alpha1.ClaimPhase
	Message string
}

// Plan is what the rollout does next.
type Plan struct {
	// Steps are every claim with its phase, in diff order.
	Steps []Step
	// Patch are the claims to patch now, highest ordinal first, at most
	// MaxConcurrent minus the claims already in flight.
	Patch []diff.ClaimChange
	// Done is true when every claim is compatible. It says nothing about
	// Blocked: a removed template can leave Done true and Blocked set.
	Done bool
	// Blocked, when set, says for people why the rollout cannot finish:
	// failed claims (no new patches), denied claims and added or removed
	// templates (reported; the other claims still proceed).
	Blocked string
	// Restart are the claims whose file system grows only when their Pod
	// restarts (WaitingForRestart), highest ordinal first: the controller
	// restarts their Pods when allowed to, or reports that they wait.
	Restart []diff.ClaimChange
	// Held, when set, says which claims wait on purpose: the StatefulSet's
	// partition holds them until a person moves it. Not a failure, so not
	// Blocked.
	Held string
	// WaitingForPods, when set, says which claims wait on purpose for a
	// person to delete their Pod (updateStrategy OnDelete). Not Blocked.
	WaitingForPods string
	// Recovered, when set, names the compatible claims whose request was
	// lowered to recover from a failed expansion (see diff's Recovery).
	Recovered string
	// Unsupported, when set, names the claims the template asks for what
	// the API server cannot do (a VolumeAttributesClass where it serves
	// none): reported, never waited for.
	Unsupported string
}

// Build plans the next step of a rollout from a diff: it classifies every
// claim, schedules the patches of those that need one, then sums up.
func Build(r diff.Result, o Options) Plan {
	added := make(map[string]bool, len(r.TemplatesAdded))
	for _, t := range r.TemplatesAdded {
		added[t] = true
	}
	p := Plan{Steps: make([]Step, len(r.Claims))}
	var t tally
	for i, c := range r.Claims {
		p.Steps[i] = t.classify(i, c, o, added[c.Template])
	}
	t.schedule(&p, r.Claims, max(o.MaxConcurrent, 1))
	p.Restart = t.restart
	slices.SortStableFunc(p.Restart, func(a, b diff.ClaimChange) int { return cmp.Compare(b.Ordinal, a.Ordinal) })

	p.Done = t.compatible == len(r.Claims)
	if t.held > 0 {
		p.Held = o.Partition.heldSummary(t.held)
	}
	if len(t.oldPods) > 0 {
		p.WaitingForPods = onDeleteSummary(t.oldPods)
	}
	p.Recovered = recoveredSummary(p.Steps)
	p.Unsupported = unsupportedSummary(p.Steps)
	p.Blocked = blocked(o.Strategy, t.failed, t.denied, t.policyDenied, r.TemplatesAdded, r.TemplatesRemoved)
	return p
}

// tally is what classifying the claims found: the claims left to schedule
// and what scheduling and the plan's summaries count.
type tally struct {
	candidates                   []int // steps that need a patch, in diff order
	failed, denied, policyDenied []string
	inFlight, compatible, held   int
	oldPods                      []string // the Pods whose deletion claims wait for
	restart                      []diff.ClaimChange
}

// classify gives claim c, step i of the plan, its phase, unless it needs a
// patch: then it is a candidate, which schedule places. added says whether
// c's template was added to the StatefulSet.
func (t *tally) classify(i int, c diff.ClaimChange, o Options, added bool) Step {
	s := Step{Claim: c}
	f := blockingFailure(c)
	denial, isDenied := o.PolicyDenied[c.Name]
	switch {
	case isDenied && !c.Missing:
		// Even a compatible claim: an over-sized one may be denied by a
		// policy on template decreases, and that is worth a report.
		s.Phase, s.Message = v1alpha1.ClaimDenied, "denied by policy: "+denial
		t.policyDenied = append(t.policyDenied, c.Name)
	case c.Compatible:
		s.Phase, s.Message = v1alpha1.ClaimCompatible, compatibleMessage(c)
		t.compatible++
	case c.Missing:
		s.Phase, s.Message = v1alpha1.ClaimPending, missingMessage(added)
	case len(c.Immutable) > 0:
		// Never patched, so a failure on it is not ours: report, don't block.
		s.Phase, s.Message = v1alpha1.ClaimDenied, deniedMessage(c)
		t.denied = append(t.denied, c.Name)
	case f != "":
		// Counted in flight and blocking: retrying would loop on the same error.
		s.Phase, s.Message = v1alpha1.ClaimFailed, f
		t.failed = append(t.failed, c.Name)
		t.inFlight++
	case c.Recovering && !c.NeedsPatch():
		s.Phase, s.Message = v1alpha1.ClaimResizing, recoveringMessage(c)
		t.inFlight++
	case c.NodeResizePending && !c.NeedsPatch():
		// In flight, so that the next claim waits for this one's Pod, as
		// the StatefulSet controller rolls one Pod at a time.
		s.Phase, s.Message = v1alpha1.ClaimWaitingForRestart, restartMessage(c)
		t.restart = append(t.restart, c)
		t.inFlight++
	case !c.NeedsPatch():
		// Spec already asks for the template: the storage is catching up.
		s.Phase, s.Message = v1alpha1.ClaimResizing, "spec matches the template; waiting for storage: "+strings.Join(c.Reasons, "; ")
		t.inFlight++
	case o.Strategy != v1alpha1.InPlace:
		s.Phase = v1alpha1.ClaimPending
		s.Message = "strategy " + string(o.Strategy) + ": keeps its old spec until the PVC is deleted (template wants " + patchSummary(c) + ")"
	case o.Partition.holds(c.Ordinal):
		s.Phase, s.Message = v1alpha1.ClaimPending, o.Partition.waitingMessage(patchSummary(c))
		t.held++
	case o.OnDelete.holding(c.Ordinal) != "":
		pod := o.OnDelete.holding(c.Ordinal)
		s.Phase, s.Message = v1alpha1.ClaimPending, onDeleteWaiting(pod, patchSummary(c))
		t.oldPods = append(t.oldPods, pod)
	default:
		t.candidates = append(t.candidates, i)
	}
	return s
}

// schedule gives the candidates of p's steps their phase: patching while
// fewer than maxInFlight claims are in flight, none while a claim failed or
// a policy denied one, waiting otherwise.
func (t *tally) schedule(p *Plan, claims []diff.ClaimChange, maxInFlight int) {
	// Highest ordinal first, as the StatefulSet controller rolls Pods; within an
	// ordinal, diff order, which is template order.
	slices.SortFunc(t.candidates, func(a, b int) int {
		if c := cmp.Compare(claims[b].Ordinal, claims[a].Ordinal); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	slots := maxInFlight - t.inFlight
	if len(t.failed) > 0 || len(t.policyDenied) > 0 {
		slots = 0
	}
	for k, i := range t.candidates {
		s := &p.Steps[i]
		switch {
		case k < slots:
			s.Phase, s.Message = v1alpha1.ClaimPatching, "patching: "+patchSummary(s.Claim)
			p.Patch = append(p.Patch, s.Claim)
		case len(t.failed) > 0:
			s.Phase, s.Message = v1alpha1.ClaimPending, "waiting: patches stopped by failed claims "+nameList(t.failed)+"; will patch "+patchSummary(s.Claim)
		case len(t.policyDenied) > 0:
			s.Phase, s.Message = v1alpha1.ClaimPending, "waiting: patches stopped by policy denials of "+nameList(t.policyDenied)+"; would patch "+patchSummary(s.Claim)
		default:
			s.Phase, s.Message = v1alpha1.ClaimPending, waitingMessage(t.inFlight+len(p.Patch), maxInFlight, s.Claim)
		}
	}
}
