package source_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

var db = types.NamespacedName{Namespace: "shop", Name: "db"}

// logLines records what a logger logs, V(1) included.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

// waitFor polls until a line logged contains s, failing as soon as
// unwanted holds.
func (l *logLines) waitFor(t *testing.T, s string, unwanted func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if unwanted() {
			t.Fatal(what)
		}
		l.mu.Lock()
		found := slices.ContainsFunc(l.lines, func(line string) bool { return strings.Contains(line, s) })
		l.mu.Unlock()
		if found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing logged %q within 10 s", s)
		}
		time.Sleep(fixtures.Poll)
	}
}

// waitingForTheOthers is what the Nudger logs when a nudge waits for the
// rest of its proposal.
const waitingForTheOthers = "waiting for the others"

// startNudger runs a Nudger of f's tool, logging to logs, until the
// returned stop, which returns once every nudge queued was made.
func startNudger(t *testing.T, f *fixture, wait time.Duration, logs *logLines) (*source.Nudger, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	n := source.NewNudger(f.tool, f.store, logs.logger(), wait)
	stopped := make(chan error)
	go func() { stopped <- n.Start(ctx) }()
	return n, func() {
		t.Helper()
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("Nudger.Start: %v", err)
		}
	}
}

// publish hands the Nudger what the rollout controller would for key: an
// outcome towards the store's proposal.
func (f *fixture) publish(n *source.Nudger, key types.NamespacedName, action outcome.Action, state outcome.State) {
	f.t.Helper()
	p, ok := f.store.Get(key)
	if !ok {
		f.t.Fatalf("no proposal for %s", key)
	}
	n.Publish(context.Background(), outcome.Outcome{Action: action, StatefulSet: key, Source: p.Source, State: state})
}

func sameKeys(got []types.NamespacedName, want ...types.NamespacedName) bool {
	return slices.Equal(got, want)
}

// TestAProposalIsNudgedOnce: a revision that changes two StatefulSets' claim
// templates (and leaves a third's alone) is one proposal; the tool is asked
// to apply again once, when both converged, naming both. A denied one does
// not hold back the other's nudge, and one that neither converges nor is
// denied holds it back only for the Nudger's wait.
func TestAProposalIsNudgedOnce(t *testing.T) {
	f := newFixture(t)
	if err := f.c.Create(context.Background(), desiredStatefulSet("shop", "db", "1Gi")); err != nil {
		t.Fatal(err)
	}
	f.set(map[string]string{keyAttempted: "r2", keyApplied: "r1", prefixSTS + "web": "2Gi", prefixSTS + "cache": "2Gi", prefixSTS + "db": "1Gi"})
	f.mustReconcile()
	pw, _ := f.store.Get(web)
	pc, _ := f.store.Get(cache)
	if pw.Round == 0 || pw.Round != pc.Round {
		t.Fatalf("rounds of shop/web %d and shop/cache %d, want one round for the read", pw.Round, pc.Round)
	}
	if _, ok := f.store.Get(db); ok {
		t.Fatal("shop/db proposed although its templates did not change")
	}

	logs := &logLines{}
	nudger, stop := startNudger(t, f, 0, logs)
	// Both converge, one after the other; db, which needs no convergence,
	// holds nothing back.
	f.publish(nudger, web, outcome.Converged, "")
	f.publish(nudger, web, outcome.Reconciled, outcome.Pending)
	f.publish(nudger, cache, outcome.Reconciled, outcome.Pending)
	logs.waitFor(t, waitingForTheOthers, func() bool { return len(f.tool.nudges()) > 0 },
		"the tool was nudged once shop/web converged, before shop/cache did")
	f.publish(nudger, cache, outcome.Converged, "")
	waitNudges(t, f.tool, 1)

	// The next revision grows both again; a policy denies cache's.
	f.recreate("web", "2Gi")
	f.recreate("cache", "2Gi")
	f.set(map[string]string{keyAttempted: "r3", keyApplied: "r1", prefixSTS + "web": "3Gi", prefixSTS + "cache": "3Gi", prefixSTS + "db": "1Gi"})
	f.mustReconcile()
	f.publish(nudger, cache, outcome.Reconciled, outcome.Failure)
	f.publish(nudger, web, outcome.Converged, "")
	waitNudges(t, f.tool, 2)
	stop()

	nudges := f.tool.nudges()
	if len(nudges) != 2 {
		t.Fatalf("%d nudges, want one per proposal: %+v", len(nudges), nudges)
	}
	if n := nudges[0]; !sameKeys(n.Converged, cache, web) || len(n.Unconverged) != 0 || n.Source.Revision != "r2" {
		t.Errorf("first nudge for %v (unconverged %v) at %s, want shop/cache and shop/web at r2", n.Converged, n.Unconverged, n.Source.Revision)
	}
	if n := nudges[1]; !sameKeys(n.Converged, web) || !sameKeys(n.Unconverged, cache) || n.Source.Revision != "r3" {
		t.Errorf("second nudge for %v (unconverged %v) at %s, want shop/web, with the denied shop/cache unconverged, at r3", n.Converged, n.Unconverged, n.Source.Revision)
	}

	// r4: cache neither converges nor is denied (the rollout controller
	// does not reach it): web's nudge waits, then goes.
	f.recreate("web", "3Gi")
	f.set(map[string]string{keyAttempted: "r4", keyApplied: "r1", prefixSTS + "web": "4Gi", prefixSTS + "cache": "4Gi"})
	f.mustReconcile()
	const wait = 500 * time.Millisecond
	nudger, stop = startNudger(t, f, wait, &logLines{})
	defer stop()
	start := time.Now()
	f.publish(nudger, web, outcome.Converged, "")
	nudges = waitNudges(t, f.tool, 3)
	if took := time.Since(start); took < wait {
		t.Errorf("nudged %v after web converged, want the wait (%v) for cache first", took, wait)
	}
	if n := nudges[2]; !sameKeys(n.Converged, web) || !sameKeys(n.Unconverged, cache) || n.Source.Revision != "r4" {
		t.Errorf("third nudge for %v (unconverged %v) at %s, want shop/web, shop/cache unconverged, at r4", n.Converged, n.Unconverged, n.Source.Revision)
	}
}
