package source

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// convergences is what a Nudger knows, per StatefulSet, of the convergence
// of the proposal the store holds for it: converged (and whether the tool
// was nudged since), or stuck (denied, its re-create failed). A StatefulSet
// it holds nothing for is still converging. An entry holds only while the
// store's proposal is of the same round; any other is stale (forget).
type convergences map[types.NamespacedName]convergence

type convergence struct {
	owner proposal.Owner
	round uint64
	// converged: a Converged outcome came for the proposal; otherwise it
	// is stuck.
	converged bool
	// at is when it converged: a nudge waits for the rest of its round
	// until wait after the last convergence.
	at time.Time
	// nudged: the tool was asked to apply again since it converged.
	nudged bool
}

// of is the entry of p's StatefulSet, if it is about p's round.
func (c convergences) of(p proposal.Proposal) (convergence, bool) {
	e, ok := c[p.Key()]
	return e, ok && e.round == p.Round && e.owner == proposal.OwnerOf(p.Source)
}

// record takes in o, an outcome about the StatefulSet of p (the store's
// proposal for it), at now, and reports whether the tool object of p may
// now be due a nudge: a StatefulSet of it converged or got stuck.
//
//   - Converged from p's tool object: converged, whatever was before (a
//     new convergence is nudged for, even after a nudge).
//   - ConvergeFailed from it: stuck until it converges (the re-create is
//     retried with back-off).
//   - Reconciled towards p's source: Failure or Error (a denial, a refusal,
//     an invalid template) is stuck; any other state is converging again
//     (the denial expired, the policy changed). A converged StatefulSet
//     stays converged.
func (c convergences) record(o outcome.Outcome, p proposal.Proposal, now time.Time) bool {
	key, owner := p.Key(), proposal.OwnerOf(p.Source)
	e, ok := c.of(p)
	if !ok {
		delete(c, key) // another round's, or none
	}
	stuck := convergence{owner: owner, round: p.Round}
	switch o.Action {
	case outcome.Converged:
		if proposal.OwnerOf(o.Source) != owner {
			return false
		}
		c[key] = convergence{owner: owner, round: p.Round, converged: true, at: now}
		return true
	case outcome.ConvergeFailed:
		if ok || proposal.OwnerOf(o.Source) != owner {
			return false // converged already, or said stuck
		}
		c[key] = stuck
		return true
	case outcome.Reconciled:
		if o.Source != p.Source || (ok && e.converged) {
			return false
		}
		if o.State == outcome.Failure || o.State == outcome.Error {
			c[key] = stuck
			return !ok
		}
		delete(c, key)
	}
	return false
}

// decide says what the tool object whose proposals ps are (the store's,
// sorted) is to be nudged for at now: nil when nothing converged since its
// last nudge, or while a StatefulSet of its newest round is still
// converging, for at most wait after the last convergence; then recheck
// says when to decide again. The StatefulSets nudged for are marked so.
//
// Only the newest round is waited for: an older round's StatefulSets were
// converged (their proposals stay, naming their commit) or are being
// re-created; those it proposed and never converged were dropped when the
// newer round was read. Its StatefulSets converged and not yet nudged for
// are nudged for with the newest round's (a tool that tried again by itself
// made a round of those left, and is still nudged once).
func (c convergences) decide(ps []proposal.Proposal, now time.Time, wait time.Duration) (n *Nudge, recheck time.Duration) {
	var newest uint64
	for _, p := range ps {
		newest = max(newest, p.Round)
	}
	var (
		next    Nudge
		last    time.Time
		waiting bool
	)
	for _, p := range ps {
		e, ok := c.of(p)
		switch {
		case ok && e.converged && !e.nudged:
			next.Converged = append(next.Converged, p.Key())
			if e.at.After(last) {
				last = e.at
			}
		case p.Round != newest, ok && e.converged:
		case ok:
			next.Unconverged = append(next.Unconverged, p.Key())
		default:
			waiting = true
			next.Unconverged = append(next.Unconverged, p.Key())
		}
		if p.Round == newest {
			next.Source, next.Revisions = p.Source, p.Revisions
		}
	}
	if len(next.Converged) == 0 {
		return nil, 0
	}
	if left := last.Add(wait).Sub(now); waiting && left > 0 {
		return nil, left
	}
	for _, key := range next.Converged {
		e := c[key]
		e.nudged = true
		c[key] = e
	}
	return &next, 0
}

// forget forgets what it holds for key unless the store, read by get, still
// holds a proposal of the same round for it. The rollout controller's
// outcomes and forgets bring every StatefulSet whose proposal changed here
// (the store notifies it), so nothing stale stays for long without a scan.
func (c convergences) forget(key types.NamespacedName, get func(types.NamespacedName) (proposal.Proposal, bool)) {
	if p, ok := get(key); ok {
		if _, ok := c.of(p); ok {
			return
		}
	}
	delete(c, key)
}
