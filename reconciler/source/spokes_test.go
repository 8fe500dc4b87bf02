package source_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// A tool object that applies to a spoke has its StatefulSets read on the
// spoke and proposed to the spoke's store; one naming a cluster nobody
// configured proposes nothing anywhere; and one moving between clusters
// leaves no proposal behind in the cluster it left.
func TestASpokeGetsItsOwnProposals(t *testing.T) {
	f := newFixture(t)
	spokeEnv := testenv.StartT(t, testenv.Options{})
	spoke := testenv.Client(t, spokeEnv.Config)
	ctx := context.Background()
	if err := fixtures.Namespace(ctx, spoke, "shop"); err != nil {
		t.Fatal(err)
	}
	// db is on the spoke only; web is on both, and differs nowhere.
	for _, name := range []string{"db", "web"} {
		if err := spoke.Create(ctx, desiredStatefulSet("shop", name, "1Gi")); err != nil {
			t.Fatal(err)
		}
	}
	spokeStore := proposal.NewStore()
	var err error
	f.r, err = source.NewReconciler(f.tool, source.Clients{Cached: f.c, Uncached: f.c, Recorder: outcome.Recorder{EventRecorder: f.events}},
		source.Options{Proposals: f.store, Spokes: source.Spokes{"eu": {Reader: spoke, Proposals: spokeStore}}})
	if err != nil {
		t.Fatal(err)
	}
	owner := proposal.Owner{Kind: toolKind, Namespace: f.key.Namespace, Name: f.key.Name}
	db := types.NamespacedName{Namespace: "shop", Name: "db"}

	f.set(map[string]string{keyAttempted: "r2", keyApplied: "r1", keyCluster: "eu", prefixSTS + "db": "2Gi", prefixSTS + "web": "1Gi"})
	f.mustReconcile()
	if got := spokeStore.Owned(owner); len(got) != 1 || got[0] != db {
		t.Errorf("the spoke's proposals %v, want [shop/db] (read on the spoke, where it is 1Gi)", got)
	}
	if got := f.owned(); len(got) != 0 {
		t.Errorf("claimwarden's own cluster got proposals %v for a tool object applying to a spoke", got)
	}

	f.set(map[string]string{keyAttempted: "r3", keyApplied: "r1", keyCluster: "nowhere", prefixSTS + "db": "3Gi"})
	err = f.reconcile()
	if err == nil || !strings.Contains(err.Error(), `cluster "nowhere", which is not one claimwarden is configured for`) {
		t.Errorf("an unconfigured cluster gave %v, want a refusal naming it", err)
	}
	if got := spokeStore.Owned(owner); len(got) != 0 {
		t.Errorf("the spoke kept proposals %v of an object that no longer applies to it", got)
	}

	f.set(map[string]string{keyAttempted: "r4", keyApplied: "r1", keyCluster: "eu", prefixSTS + "db": "2Gi"})
	f.mustReconcile()
	f.said()

	// A spoke that does not answer: the object is told, and retried.
	if err := spokeEnv.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	f.set(map[string]string{keyAttempted: "r4b", keyApplied: "r1", keyCluster: "eu", prefixSTS + "db": "3Gi"})
	if err := f.reconcile(); err == nil || !strings.Contains(err.Error(), "reading StatefulSet shop/db in cluster eu") {
		t.Errorf("reading an unreachable spoke gave %v, want an error naming the StatefulSet and the cluster, for a retry", err)
	}
	if got := f.said(); len(got) != 1 || !strings.Contains(got[0], source.ReasonReadFailed) || !strings.Contains(got[0], "in cluster eu") {
		t.Errorf("events %q, want one %s naming the cluster", got, source.ReasonReadFailed)
	}
	if err := spokeEnv.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	f.set(map[string]string{keyAttempted: "r5", keyApplied: "r1", prefixSTS + "web": "2Gi"})
	f.mustReconcile()
	if got := spokeStore.Owned(owner); len(got) != 0 {
		t.Errorf("the spoke kept proposals %v after the object moved to claimwarden's own cluster", got)
	}
	if got := f.owned(); len(got) != 1 || got[0] != web {
		t.Errorf("claimwarden's own cluster's proposals %v, want [shop/web]", got)
	}
}
