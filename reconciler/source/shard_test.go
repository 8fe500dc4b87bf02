package source_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// A tool object another instance handles is left alone, what it proposed
// here dropped; one no instance handles is said so, once.
func TestAnotherShardsToolObjectIsLeftAlone(t *testing.T) {
	f := newFixture(t)
	shard := "mine"
	selects := func(obj client.Object) (bool, string) {
		switch obj.(*corev1.ConfigMap).Data["shard"] {
		case shard:
			return true, ""
		case "nobody's":
			return false, "no claimwarden instance handles shard nobody's"
		}
		return false, ""
	}
	var err error
	f.r, err = source.NewReconciler(f.tool, source.Clients{Cached: f.c, Uncached: f.c, Recorder: outcome.Recorder{EventRecorder: f.events}},
		source.Options{Proposals: f.store, Select: selects})
	if err != nil {
		t.Fatal(err)
	}
	owner := proposal.Owner{Kind: toolKind, Namespace: f.key.Namespace, Name: f.key.Name}
	blocked := map[string]string{keyAttempted: "r2", keyApplied: "r1", prefixSTS + "web": "2Gi", "shard": "mine"}
	f.set(blocked)
	f.mustReconcile()
	if got := f.store.Owned(owner); len(got) != 1 {
		t.Fatalf("proposals %v, want shop/web", got)
	}
	f.said()

	blocked["shard"] = "theirs"
	f.set(blocked)
	f.mustReconcile()
	if got := f.store.Owned(owner); len(got) != 0 {
		t.Errorf("proposals %v kept after the object moved to another shard", got)
	}
	if got := f.said(); len(got) != 0 {
		t.Errorf("events %q about another instance's object", got)
	}

	blocked["shard"] = "nobody's"
	f.set(blocked)
	f.mustReconcile()
	f.mustReconcile()
	if got := f.said(); len(got) != 1 || !strings.Contains(got[0], source.ReasonNoShard) || !strings.Contains(got[0], "no claimwarden instance handles") {
		t.Errorf("events %q, want one %s", got, source.ReasonNoShard)
	}
	if n := f.tool.desiredReads.Load(); n != 1 {
		t.Errorf("the desired state was read %d times, want once, while the object was this instance's", n)
	}
}
