package converge_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/reconciler/converge"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// gitops plays Flux re-applying the StatefulSet from Git (still the old
// template) as soon as it notices it missing.
type gitops struct {
	t   *testing.T
	c   client.Client
	ns  string
	uid types.UID
}

// recreate waits until the old object is gone (the garbage collector
// finished orphaning), then creates the manifest under Flux's field manager.
func (g *gitops) recreate(ctx context.Context) {
	g.t.Helper()
	poll(ctx, g.t, 60*time.Second, "old statefulset gone", func(ctx context.Context) (bool, error) {
		err := g.c.Get(ctx, key(g.ns), &appsv1.StatefulSet{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	obj := manifest(g.ns, "1Gi")
	if err := g.c.Create(ctx, obj, client.FieldOwner("kustomize-controller")); err != nil {
		g.t.Fatalf("gitops re-create: %v", err)
	}
	g.uid = obj.UID
}

// assertTheirs checks that the one StatefulSet is the one gitops created,
// that it re-adopted the Pods, and that nothing is left to resume: a further
// Resume neither errors nor acts, so the rollout controller does not loop.
func (g *gitops) assertTheirs(ctx context.Context, t *testing.T, conv *converge.Converger, before snapshot, start time.Time) {
	t.Helper()
	sts, _ := assertAdopted(ctx, t, g.c, g.ns, before, "1Gi", start)
	if sts.UID != g.uid {
		t.Errorf("statefulset uid %s, want the one gitops created (%s)", sts.UID, g.uid)
	}
	if slices.Contains(managers(sts), converge.DefaultFieldOwner) {
		t.Errorf("managers %v: claimwarden wrote the object gitops re-created", managers(sts))
	}
	assertNoRecord(ctx, t, cmJournal{g.c}, g.ns)
	if progress, err := conv.Resume(ctx, key(g.ns)); err != nil || progress != converge.NothingRecorded {
		t.Errorf("Resume afterwards = %v, %v; want nothing recorded", progress, err)
	}
}

// Scenario 4a: Flux re-creates the StatefulSet while the Converger waits for
// the orphan delete to finish.
func TestConvergeRecreatedElsewhereWhileWaiting(t *testing.T) {
	ctx := ctxFor(t)
	c, _ := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	before := take(ctx, t, c, ns)
	g := &gitops{t: t, c: c, ns: ns}
	conv := converge.New(converge.Options{Client: &hookClient{Client: c, afterDelete: g.recreate}, Journal: cmJournal{c}, JournalKey: staticKey})

	start := time.Now()
	_, err := conv.Converge(ctx, live, manifest(ns, "2Gi"))
	if !errors.Is(err, converge.ErrRecreatedElsewhere) {
		t.Fatalf("Converge = %v, want ErrRecreatedElsewhere", err)
	}
	t.Log(err)
	g.assertTheirs(ctx, t, conv, before, start)
}

// Scenario 4b: Flux re-creates it in the instant between our last read and
// our create: the create meets AlreadyExists and must not be retried.
func TestConvergeRecreatedElsewhereBeforeCreate(t *testing.T) {
	ctx := ctxFor(t)
	c, _ := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	before := take(ctx, t, c, ns)
	g := &gitops{t: t, c: c, ns: ns}
	conv := converge.New(converge.Options{Client: &hookClient{Client: c, beforeCreate: g.recreate}, Journal: cmJournal{c}, JournalKey: staticKey})

	start := time.Now()
	progress, err := conv.Converge(ctx, live, manifest(ns, "2Gi"))
	// The old object is usually still being orphaned when Converge looks:
	// the create, and Flux's, then happen in a later Resume.
	if _, err = settle(ctx, t, conv, ns, progress, err); !errors.Is(err, converge.ErrRecreatedElsewhere) {
		t.Fatalf("Converge, then Resume while waiting = %v, want ErrRecreatedElsewhere", err)
	}
	g.assertTheirs(ctx, t, conv, before, start)
}

// Scenario 4c: the controller crashed after the delete and Flux re-created
// the object before the restarted controller's Resume.
func TestResumeRecreatedElsewhereAfterCrash(t *testing.T) {
	ctx := ctxFor(t)
	c, _ := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	before := take(ctx, t, c, ns)
	j := cmJournal{c}

	crashCtx, crash := context.WithCancel(ctx)
	dying := converge.New(converge.Options{Client: &hookClient{Client: c, afterDelete: func(context.Context) { crash() }}, Journal: j, JournalKey: staticKey})
	start := time.Now()
	if _, err := dying.Converge(crashCtx, live, manifest(ns, "2Gi")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Converge after crash = %v, want context.Canceled", err)
	}
	g := &gitops{t: t, c: c, ns: ns}
	g.recreate(ctx)

	restarted := converge.New(converge.Options{Client: c, Journal: j, JournalKey: staticKey})
	progress, err := restarted.Resume(ctx, key(ns))
	if progress != converge.NothingRecorded || !errors.Is(err, converge.ErrRecreatedElsewhere) {
		t.Fatalf("Resume = %v, %v; want nothing recorded, ErrRecreatedElsewhere", progress, err)
	}
	g.assertTheirs(ctx, t, restarted, before, start)
}
