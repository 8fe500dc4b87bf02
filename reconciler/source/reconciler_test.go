package source_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// fixture is a real API server holding the tool's ConfigMap and the live
// StatefulSets (no controllers: nothing but the objects matters), and the
// Reconciler called directly.
type fixture struct {
	t      *testing.T
	c      client.Client
	tool   *configMapTool
	r      *source.Reconciler
	events *events.FakeRecorder
	store  *proposal.Store
	key    types.NamespacedName
}

func newFixture(t *testing.T) *fixture {
	env := testenv.StartT(t, testenv.Options{})
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := fixtures.Namespace(ctx, c, "shop"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web", "cache"} {
		if err := c.Create(ctx, desiredStatefulSet("shop", name, "1Gi")); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{t: t, c: c, tool: &configMapTool{}, events: events.NewFakeRecorder(100), store: proposal.NewStore(),
		key: types.NamespacedName{Namespace: "shop", Name: "demo"}}
	f.events.Verbose = true // with the annotations
	f.r, err = source.NewReconciler(f.tool, source.Clients{Cached: c, Uncached: c, Recorder: outcome.Recorder{EventRecorder: f.events}}, source.Options{Proposals: f.store})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// set writes the tool's ConfigMap with exactly data.
func (f *fixture) set(data map[string]string) {
	f.t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: f.key.Name}}
	if err := f.c.Get(ctx, f.key, cm); client.IgnoreNotFound(err) != nil {
		f.t.Fatal(err)
	}
	cm.Data = maps.Clone(data)
	var err error
	if cm.ResourceVersion == "" {
		err = f.c.Create(ctx, cm)
	} else {
		err = f.c.Update(ctx, cm)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) reconcile() error {
	f.t.Helper()
	_, err := f.r.Reconcile(ctrl.LoggerInto(context.Background(), ctrl.Log), ctrl.Request{NamespacedName: f.key})
	return err
}

func (f *fixture) mustReconcile() {
	f.t.Helper()
	if err := f.reconcile(); err != nil {
		f.t.Fatal(err)
	}
}

// said returns the events recorded since the last call.
func (f *fixture) said() []string {
	var out []string
	for {
		select {
		case e := <-f.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (f *fixture) owned() []types.NamespacedName {
	return f.store.Owned(proposal.Owner{Kind: toolKind, Namespace: f.key.Namespace, Name: f.key.Name})
}

// recreate replaces the live StatefulSet name with one at size, as a
// convergence does.
func (f *fixture) recreate(name, size string) {
	f.t.Helper()
	ctx := context.Background()
	if err := f.c.Delete(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}); err != nil {
		f.t.Fatal(err)
	}
	if err := f.c.Create(ctx, desiredStatefulSet("shop", name, size)); err != nil {
		f.t.Fatal(err)
	}
}

var (
	web   = types.NamespacedName{Namespace: "shop", Name: "web"}
	cache = types.NamespacedName{Namespace: "shop", Name: "cache"}
)

// TestANewToolNeedsNothingElse takes a Tool that only reads and nudges
// through everything the Reconciler and the Nudger do for it.
func TestANewToolNeedsNothingElse(t *testing.T) {
	f := newFixture(t)

	// Idle: nothing is read.
	f.set(map[string]string{keyAttempted: "r1", keyApplied: "r1"})
	f.mustReconcile()
	if n := f.tool.desiredReads.Load(); n != 0 {
		t.Fatalf("an idle object's desired state was read %d times", n)
	}

	// Blocked: web grows and is proposed; cache is as it is, and is not.
	f.set(map[string]string{keyAttempted: "r2", keyApplied: "r1", prefixSTS + "web": "2Gi", prefixSTS + "cache": "1Gi"})
	f.mustReconcile()
	p, ok := f.store.Get(web)
	if !ok {
		t.Fatal("no proposal for shop/web")
	}
	want := v1alpha1.Source{Kind: toolKind, Namespace: "shop", Name: "demo", Repository: toolRepository, Revision: "r2", Chart: toolChart}
	if p.Source != want || len(p.Revisions) != 1 || p.Revisions[0] != "r2" || len(p.IgnoredLabels) != 1 {
		t.Errorf("proposal source %+v revisions %v ignored labels %v, want %+v, [r2], [team]", p.Source, p.Revisions, p.IgnoredLabels, want)
	}
	if _, ok := f.store.Get(cache); ok {
		t.Error("shop/cache proposed although its templates did not change")
	}
	got := f.said()
	if len(got) != 1 || !strings.Contains(got[0], source.ReasonProposed) || !strings.Contains(got[0], "shop/web") ||
		!strings.Contains(got[0], outcome.AnnotationRevision+":r2") || !strings.Contains(got[0], outcome.AnnotationSource+":Demo shop/demo") {
		t.Errorf("events %q, want one proposal of shop/web annotated with r2 and its source", got)
	}

	// The same revision again: nothing is read again.
	f.mustReconcile()
	if n := f.tool.desiredReads.Load(); n != 1 {
		t.Errorf("the same revision key was read %d times, want 1", n)
	}

	// Converged: the Nudger nudges the tool with the proposal, and only
	// for its own kind and proposals.
	ctx, cancel := context.WithCancel(context.Background())
	nudger := source.NewNudger(f.tool, f.store, ctrl.Log, 0)
	stopped := make(chan error)
	go func() { stopped <- nudger.Start(ctx) }()
	other := want
	other.Kind = "Kustomization"
	nudger.Publish(ctx, outcome.Outcome{Action: outcome.Converged, StatefulSet: web, Source: other})
	nudger.Publish(ctx, outcome.Outcome{Action: outcome.Converged, StatefulSet: cache, Source: want})
	nudger.Publish(ctx, outcome.Outcome{Action: outcome.Reconciled, StatefulSet: web, Source: want, State: outcome.Success})
	nudger.Publish(ctx, outcome.Outcome{Action: outcome.Converged, StatefulSet: web, Source: want})
	nudges := waitNudges(t, f.tool, 1)
	if n := nudges[0]; !slices.Equal(n.Converged, []types.NamespacedName{web}) || len(n.Unconverged) != 0 || n.Source != want || n.Revisions[0] != "r2" {
		t.Errorf("nudged for %v (unconverged %v) %+v %v, want shop/web's proposal at r2", n.Converged, n.Unconverged, n.Source, n.Revisions)
	}
	cancel()
	if err := <-stopped; err != nil {
		t.Errorf("Nudger.Start: %v", err)
	}
	if n := len(f.tool.nudges()); n != 1 {
		t.Errorf("%d nudges, want only shop/web's", n)
	}

	// The source cannot be read: the rollouts say so, the object gets a
	// warning, and the error is returned for a retry with back-off.
	f.set(map[string]string{keyAttempted: "r3", keyApplied: "r1", keyFail: "fetching r3: 404 Not Found"})
	if err := f.reconcile(); err == nil {
		t.Fatal("a failed read was not returned for a retry")
	}
	if p, _ := f.store.Get(web); !strings.Contains(p.SourceError, "404 Not Found") {
		t.Errorf("proposal source error %q, want the read error", p.SourceError)
	}
	if got := f.said(); len(got) != 1 || !strings.Contains(got[0], "Warning "+source.ReasonReadFailed) {
		t.Errorf("events %q, want one read failure", got)
	}

	// Readable again, without web: its proposal is pruned; cache grows.
	f.set(map[string]string{keyAttempted: "r3", keyApplied: "r1", prefixSTS + "cache": "3Gi"})
	f.mustReconcile()
	if _, ok := f.store.Get(web); ok {
		t.Error("the proposal of a StatefulSet removed from the source stayed")
	}
	if p, ok := f.store.Get(cache); !ok || p.SourceError != "" || p.Source.Revision != "r3" {
		t.Errorf("cache proposal %+v (found %v), want r3 without error", p, ok)
	}
	f.said()

	// Reverted before it converged: the proposal is no longer asked for,
	// and that nothing is to be done is said once.
	f.set(map[string]string{keyAttempted: "r4", keyApplied: "r1", prefixSTS + "cache": "1Gi"})
	f.mustReconcile()
	if got := f.owned(); len(got) != 0 {
		t.Errorf("proposals %v stayed after the revert", got)
	}
	f.set(map[string]string{keyAttempted: "r4", keyApplied: "r1", prefixSTS + "cache": "1Gi", "touched": "yes"})
	f.mustReconcile()
	if got := f.said(); len(got) != 1 || !strings.Contains(got[0], source.ReasonNothingToDo) {
		t.Errorf("events %q, want nothing to do said once", got)
	}

	// A converged proposal stays when the tool is idle: it names the
	// commit its rollout reports to. One never converged does not.
	f.set(map[string]string{keyAttempted: "r5", keyApplied: "r1", prefixSTS + "cache": "3Gi", prefixSTS + "web": "2Gi"})
	f.mustReconcile()
	f.recreate("cache", "3Gi")
	f.set(map[string]string{keyAttempted: "r5", keyApplied: "r5"})
	f.mustReconcile()
	if got := f.owned(); len(got) != 1 || got[0] != cache {
		t.Errorf("idle: proposals %v, want only the converged shop/cache", got)
	}

	// Blocked again, then suspended: its proposals are dropped, the tool
	// forgets, and the suspension is said once.
	f.set(map[string]string{keyAttempted: "r6", keyApplied: "r5", prefixSTS + "web": "2Gi"})
	f.mustReconcile()
	reads := f.tool.desiredReads.Load()
	f.said()
	f.set(map[string]string{keyAttempted: "r6", keyApplied: "r5", prefixSTS + "web": "2Gi", keySuspend: "true"})
	f.mustReconcile()
	f.mustReconcile()
	if got := f.owned(); len(got) != 0 {
		t.Errorf("a suspended object's proposals %v stayed", got)
	}
	if got := f.said(); len(got) != 1 || !strings.Contains(got[0], reasonSkipped) {
		t.Errorf("events %q, want the suspension said once", got)
	}
	if f.tool.forgets() == 0 {
		t.Error("the tool was not told to forget the suspended object")
	}

	// Resumed at the same revision: the suspension dropped its memory, so
	// it is read and proposed again.
	f.set(map[string]string{keyAttempted: "r6", keyApplied: "r5", prefixSTS + "web": "2Gi"})
	f.mustReconcile()
	if n := f.tool.desiredReads.Load(); n != reads+1 {
		t.Errorf("after the suspension r6 was read %d more times, want 1", n-reads)
	}
	if _, ok := f.store.Get(web); !ok {
		t.Error("shop/web not proposed again once resumed")
	}

	// Deleted: everything is forgotten, what was said included.
	if err := f.c.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: f.key.Name}}); err != nil {
		t.Fatal(err)
	}
	f.mustReconcile()
	if got := f.owned(); len(got) != 0 {
		t.Errorf("a deleted object's proposals %v stayed", got)
	}
	f.said()
	f.set(map[string]string{keySuspend: "true"})
	f.mustReconcile()
	if got := f.said(); len(got) != 1 || !strings.Contains(got[0], reasonSkipped) {
		t.Errorf("events %q, want the suspension of the new object said", got)
	}
}

// waitNudges polls until the tool was nudged n times.
func waitNudges(t *testing.T, tool *configMapTool, n int) []source.Nudge {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got := tool.nudges(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool was nudged %d times within 10 s, want %d", len(tool.nudges()), n)
		}
		time.Sleep(fixtures.Poll)
	}
}
