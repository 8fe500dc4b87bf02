package rollout_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// bundleKind is the Source kind of the proposals the tests' Nudger nudges
// for; no other test proposes it.
const bundleKind = "Bundle"

// nudgerSink hands the controller's outcomes to the Nudger a test set (the
// controller's sinks are fixed when the manager starts).
type nudgerSink struct {
	mu     sync.Mutex
	nudger *source.Nudger
}

var nudging = &nudgerSink{}

func (s *nudgerSink) set(n *source.Nudger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nudger = n
}

func (s *nudgerSink) Publish(ctx context.Context, o outcome.Outcome) {
	s.mu.Lock()
	n := s.nudger
	s.mu.Unlock()
	if n != nil {
		n.Publish(ctx, o)
	}
}

func (s *nudgerSink) Forget(key types.NamespacedName) {
	s.mu.Lock()
	n := s.nudger
	s.mu.Unlock()
	if n != nil {
		n.Forget(key)
	}
}

// bundleTool is a GitOps tool that only records its nudges: the proposals
// are put into the store by the test, as a source's Reconciler would.
type bundleTool struct {
	mu     sync.Mutex
	nudged []source.Nudge
}

func (*bundleTool) Kind() string                { return bundleKind }
func (*bundleTool) NewObject() client.Object    { return &appsv1.StatefulSet{} }
func (*bundleTool) Forget(types.NamespacedName) {}
func (*bundleTool) Read(context.Context, client.Object) (source.Reading, error) {
	return source.Reading{}, nil
}
func (*bundleTool) Desired(context.Context, client.Object) (source.Desired, error) {
	return source.Desired{}, nil
}
func (*bundleTool) Authority(context.Context, client.Object) (*v1alpha1.Identity, error) {
	return nil, nil
}
func (*bundleTool) Manages(context.Context, client.Object, *appsv1.StatefulSet) error { return nil }

func (b *bundleTool) Nudge(_ context.Context, n source.Nudge) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nudged = append(b.nudged, n)
	return nil
}

func (b *bundleTool) nudges() []source.Nudge {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.nudged)
}

// proposeRound proposes, as one read of Bundle ns/apps, every StatefulSet
// of sizes at its size, and runs a Nudger for it until the returned stop,
// which returns once every nudge queued was made.
func proposeRound(t *testing.T, ns string, live map[string]*appsv1.StatefulSet, sizes map[string]string) (*bundleTool, func()) {
	t.Helper()
	tool := &bundleTool{}
	ctx, cancel := context.WithCancel(context.Background())
	// An hour: a nudge seen within the test's timeout was not the wait's.
	nudger := source.NewNudger(tool, proposals, ctrl.Log.WithName("nudger"), time.Hour)
	stopped := make(chan error)
	go func() { stopped <- nudger.Start(ctx) }()
	nudging.set(nudger)
	round := proposals.NextRound()
	var ps []proposal.Proposal
	for name, size := range sizes {
		desired := live[name].DeepCopy()
		fixtures.SetTemplateSize(size)(desired)
		ps = append(ps, proposal.Proposal{StatefulSet: desired, Round: round,
			Source: v1alpha1.Source{Kind: bundleKind, Namespace: ns, Name: "apps", Revision: "r1"}})
	}
	proposals.SetAll(context.Background(), ps)
	return tool, func() {
		t.Helper()
		nudging.set(nil)
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("Nudger.Start: %v", err)
		}
	}
}

func waitNudge(t *testing.T, tool *bundleTool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for len(tool.nudges()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the tool was not nudged within %v", timeout)
		}
		time.Sleep(fixtures.Poll)
	}
}

// TestAProposalOfTwoStatefulSetsIsNudgedOnce: the controller converges both
// StatefulSets one revision changed, and the tool is asked to apply again
// once, naming both; a denied one does not hold back the other's nudge,
// which names it unconverged (the tool's apply fails on it again anyway).
func TestAProposalOfTwoStatefulSetsIsNudgedOnce(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	live := map[string]*appsv1.StatefulSet{}
	for _, name := range []string{"db", "cache"} {
		live[name], _ = createLive(t, c, fixtures.StatefulSet(ns, name, 1, classExpandable, "1Gi"))
	}
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }
	recreated := func(name string) bool {
		var now appsv1.StatefulSet
		return c.Get(context.Background(), key(name), &now) == nil && now.UID != live[name].UID
	}

	tool, stop := proposeRound(t, ns, live, map[string]string{"db": "1536Mi", "cache": "1536Mi"})
	for _, name := range []string{"db", "cache"} {
		waitRollout(t, c, key(name), "Ready at 1536Mi", func(v *v1alpha1.VolumeClaimRollout) bool {
			return readyTrue(v) && v.Status.Claims[0].To == "1536Mi"
		})
		if !recreated(name) {
			t.Errorf("%s was not re-created", name)
		}
	}
	waitNudge(t, tool)
	stop()
	if got := tool.nudges(); len(got) != 1 || !slices.Equal(got[0].Converged, []types.NamespacedName{key("cache"), key("db")}) || len(got[0].Unconverged) != 0 {
		t.Fatalf("nudges %+v, want one naming cache and db", got)
	}

	// cache grows +300%: max-step denies it; db's nudge goes without it.
	live["db"], live["cache"] = fetch(t, c, key("db")), fetch(t, c, key("cache"))
	tool, stop = proposeRound(t, ns, live, map[string]string{"db": "2Gi", "cache": "6Gi"})
	waitRollout(t, c, key("cache"), "denied", func(v *v1alpha1.VolumeClaimRollout) bool { return stalled(v) && v.Status.Counts.Denied == 1 })
	waitRollout(t, c, key("db"), "Ready at 2Gi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Claims[0].To == "2Gi"
	})
	waitNudge(t, tool)
	stop()
	if got := tool.nudges(); len(got) != 1 || !slices.Equal(got[0].Converged, []types.NamespacedName{key("db")}) || !slices.Equal(got[0].Unconverged, []types.NamespacedName{key("cache")}) {
		t.Fatalf("nudges %+v, want one naming db, with the denied cache unconverged", got)
	}
}

func fetch(t *testing.T, c client.Client, key types.NamespacedName) *appsv1.StatefulSet {
	t.Helper()
	var sts appsv1.StatefulSet
	if err := c.Get(context.Background(), key, &sts); err != nil {
		t.Fatal(err)
	}
	return &sts
}
