package source

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

var (
	dbKey    = types.NamespacedName{Namespace: "shop", Name: "db"}
	replicas = types.NamespacedName{Namespace: "shop", Name: "db-read"}
	apps     = v1alpha1.Source{Kind: "HelmRelease", Namespace: "shop", Name: "db", Revision: "main@sha1:1"}
	t0       = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

const wait = time.Minute

// proposed is what the store holds for key: round's proposal from src.
func proposed(key types.NamespacedName, src v1alpha1.Source, round uint64) proposal.Proposal {
	return proposal.Proposal{
		StatefulSet: &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}},
		Source:      src, Revisions: []string{src.Revision}, Round: round,
	}
}

func converged(p proposal.Proposal) outcome.Outcome {
	return outcome.Outcome{Action: outcome.Converged, StatefulSet: p.Key(), Source: p.Source}
}

func reconciled(p proposal.Proposal, state outcome.State) outcome.Outcome {
	return outcome.Outcome{Action: outcome.Reconciled, StatefulSet: p.Key(), Source: p.Source, State: state}
}

// keys lists names for comparison with a Nudge's.
func keys(names ...types.NamespacedName) []types.NamespacedName { return names }

func mustNudge(t *testing.T, n *Nudge, recheck time.Duration, converged, unconverged []types.NamespacedName) {
	t.Helper()
	if n == nil {
		t.Fatalf("no nudge (recheck in %v), want one for %v", recheck, converged)
	}
	if !slices.Equal(n.Converged, converged) || !slices.Equal(n.Unconverged, unconverged) {
		t.Fatalf("nudged for %v, unconverged %v; want %v, unconverged %v", n.Converged, n.Unconverged, converged, unconverged)
	}
}

func mustNotNudge(t *testing.T, n *Nudge, recheck, wantRecheck time.Duration) {
	t.Helper()
	if n != nil {
		t.Fatalf("nudged for %v, unconverged %v; want no nudge yet", n.Converged, n.Unconverged)
	}
	if recheck != wantRecheck {
		t.Fatalf("recheck in %v, want %v", recheck, wantRecheck)
	}
}

// One release, two StatefulSets: one nudge, once both converged, naming both.
func TestOneNudgePerProposal(t *testing.T) {
	c := convergences{}
	db, read := proposed(dbKey, apps, 7), proposed(replicas, apps, 7)
	ps := []proposal.Proposal{db, read}

	if !c.record(converged(db), db, t0) {
		t.Fatal("a convergence did not make the tool object due")
	}
	n, recheck := c.decide(ps, t0.Add(time.Second), wait)
	mustNotNudge(t, n, recheck, wait-time.Second)
	c.record(reconciled(db, outcome.Pending), db, t0.Add(2*time.Second))
	c.record(converged(read), read, t0.Add(3*time.Second))
	n, recheck = c.decide(ps, t0.Add(3*time.Second), wait)
	mustNudge(t, n, recheck, keys(dbKey, replicas), nil)
	if n.Source != apps || !slices.Equal(n.Revisions, []string{apps.Revision}) {
		t.Errorf("nudge source %+v revisions %v, want the proposal's", n.Source, n.Revisions)
	}
	// Reconciles after the convergence change nothing: no second nudge.
	c.record(reconciled(db, outcome.Success), db, t0.Add(4*time.Second))
	c.record(reconciled(read, outcome.Failure), read, t0.Add(4*time.Second))
	n, recheck = c.decide(ps, t0.Add(time.Hour), wait)
	mustNotNudge(t, n, recheck, 0)
}

// A denied StatefulSet, or one whose re-create failed, does not hold back
// the others' nudge, which names it; converging later, it is nudged for.
func TestAStuckStatefulSetDoesNotHoldBackTheNudge(t *testing.T) {
	for _, stuck := range []struct {
		name string
		out  func(proposal.Proposal) outcome.Outcome
	}{
		{"denied", func(p proposal.Proposal) outcome.Outcome { return reconciled(p, outcome.Failure) }},
		{"blocked", func(p proposal.Proposal) outcome.Outcome { return reconciled(p, outcome.Error) }},
		{"re-create failed", func(p proposal.Proposal) outcome.Outcome {
			return outcome.Outcome{Action: outcome.ConvergeFailed, StatefulSet: p.Key(), Source: p.Source, Message: "webhook said no"}
		}},
	} {
		t.Run(stuck.name, func(t *testing.T) {
			c := convergences{}
			db, read := proposed(dbKey, apps, 7), proposed(replicas, apps, 7)
			ps := []proposal.Proposal{db, read}
			if !c.record(stuck.out(read), read, t0) {
				t.Fatal("a stuck StatefulSet did not make the tool object due")
			}
			n, recheck := c.decide(ps, t0, wait)
			mustNotNudge(t, n, recheck, 0) // nothing converged: nothing to apply again
			if c.record(stuck.out(read), read, t0) {
				t.Error("the same stuck outcome again made the tool object due again")
			}
			c.record(converged(db), db, t0.Add(time.Second))
			n, recheck = c.decide(ps, t0.Add(time.Second), wait)
			mustNudge(t, n, recheck, keys(dbKey), keys(replicas))

			// The policy changed: converging again, then converged.
			c.record(reconciled(read, outcome.Pending), read, t0.Add(2*time.Second))
			c.record(converged(read), read, t0.Add(3*time.Second))
			n, recheck = c.decide(ps, t0.Add(3*time.Second), wait)
			mustNudge(t, n, recheck, keys(replicas), nil)
		})
	}
}

// A StatefulSet that never converges nor gets stuck (outside the rollout
// controller's scope) holds the nudge back for the wait after the last
// convergence, no longer.
func TestANudgeWaitsBoundedly(t *testing.T) {
	c := convergences{}
	db, read, third := proposed(dbKey, apps, 7), proposed(replicas, apps, 7), proposed(types.NamespacedName{Namespace: "shop", Name: "z"}, apps, 7)
	ps := []proposal.Proposal{db, read, third}
	c.record(converged(db), db, t0)
	c.record(converged(read), read, t0.Add(30*time.Second))
	n, recheck := c.decide(ps, t0.Add(45*time.Second), wait)
	mustNotNudge(t, n, recheck, 45*time.Second) // a minute after the last one
	n, recheck = c.decide(ps, t0.Add(90*time.Second), wait)
	mustNudge(t, n, recheck, keys(dbKey, replicas), keys(third.Key()))
}

// Only the newest round is waited for; a StatefulSet converged in an older
// one (the tool tried again by itself, proposing only what was left) is
// nudged for with it, once.
func TestATryInBetweenStillNudgesOnce(t *testing.T) {
	c := convergences{}
	db := proposed(dbKey, apps, 7) // db-read was proposed in round 7 too
	c.record(converged(db), db, t0)
	// helm-controller retried: release v3 failed on db-read only.
	retry := apps
	retry.Revision = "main@sha1:2"
	read := proposed(replicas, retry, 8)
	ps := []proposal.Proposal{db, read}
	n, recheck := c.decide(ps, t0.Add(time.Second), wait)
	mustNotNudge(t, n, recheck, wait-time.Second)
	c.record(converged(read), read, t0.Add(2*time.Second))
	n, recheck = c.decide(ps, t0.Add(2*time.Second), wait)
	mustNudge(t, n, recheck, keys(dbKey, replicas), nil)
	if n.Source != retry {
		t.Errorf("nudge source %+v, want the newest round's %+v", n.Source, retry)
	}

	// A later round of db alone, after everything was nudged for, waits
	// for db only: db-read, converged in round 8, holds nothing back.
	db = proposed(dbKey, retry, 9)
	ps = []proposal.Proposal{db, read}
	c.record(converged(db), db, t0.Add(time.Minute))
	n, recheck = c.decide(ps, t0.Add(time.Minute), wait)
	mustNudge(t, n, recheck, keys(dbKey), nil)
}

// Outcomes about something else than the store's proposal change nothing:
// another tool object's convergence, a reconcile towards an older revision,
// an entry of a replaced round.
func TestOnlyTheProposalsOwnOutcomesCount(t *testing.T) {
	c := convergences{}
	db, read := proposed(dbKey, apps, 7), proposed(replicas, apps, 7)
	ps := []proposal.Proposal{db, read}
	other := converged(db)
	other.Source.Name = "other"
	if c.record(other, db, t0) {
		t.Error("another tool object's convergence made this one due")
	}
	older := reconciled(read, outcome.Failure)
	older.Source.Revision = "main@sha1:0"
	if c.record(older, read, t0) {
		t.Error("a denial towards an older revision made the proposal stuck")
	}
	c.record(converged(db), db, t0)
	n, recheck := c.decide(ps, t0, wait)
	mustNotNudge(t, n, recheck, wait)

	// db proposed again (a new read): its convergence was another round's.
	db = proposed(dbKey, apps, 8)
	c.record(converged(read), read, t0)
	n, recheck = c.decide([]proposal.Proposal{db, read}, t0, wait)
	mustNotNudge(t, n, recheck, wait)
}

// What is remembered goes with the proposals: pruned, dropped or replaced,
// their entries are forgotten; a StatefulSet forgotten whose proposal stays
// (its re-create not yet in the rollout controller's cache) keeps its.
func TestConvergencesGoWithTheirProposals(t *testing.T) {
	c := convergences{}
	db, read := proposed(dbKey, apps, 7), proposed(replicas, apps, 7)
	c.record(converged(db), db, t0)
	c.record(reconciled(read, outcome.Failure), read, t0)
	store := map[types.NamespacedName]proposal.Proposal{dbKey: db, replicas: read}
	get := func(k types.NamespacedName) (proposal.Proposal, bool) { p, ok := store[k]; return p, ok }
	c.forget(dbKey, get)
	c.forget(replicas, get)
	if len(c) != 2 {
		t.Fatalf("%d entries after forgetting StatefulSets whose proposals stay, want 2", len(c))
	}
	delete(store, dbKey)
	store[replicas] = proposed(replicas, apps, 8)
	c.forget(dbKey, get)
	c.forget(replicas, get)
	if len(c) != 0 {
		t.Errorf("entries %v stayed after their proposals were dropped or replaced", c)
	}
}
