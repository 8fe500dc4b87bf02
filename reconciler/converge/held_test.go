package converge_test

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/converge"
)

// holdFinalizer keeps the old StatefulSet present after the garbage collector
// finished orphaning its dependents, as a slow garbage collector or another
// controller's finalizer would.
const holdFinalizer = "example.com/hold"

// notHeld bounds a Converge or Resume while the old object is held: a handful
// of requests to the API server, no waiting. The Converger used to wait up to
// two minutes here, holding one of the rollout controller's few workers.
const notHeld = time.Second

// Neither Converge nor Resume waits for the orphan delete: while a finalizer
// holds the old object both report Waiting at once and keep the record; once
// the finalizer is removed, Resume re-creates the StatefulSet, which adopts the
// same Pods.
func TestConvergeDoesNotWaitForAHeldDelete(t *testing.T) {
	ctx := ctxFor(t)
	c, cs := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	hold := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":["`+holdFinalizer+`"]}}`))
	if err := c.Patch(ctx, live, hold); err != nil {
		t.Fatal(err)
	}
	before := take(ctx, t, c, ns)
	pods := watchPods(ctx, t, cs, ns)
	j := cmJournal{c}
	conv := converge.New(converge.Options{Client: c, Journal: j, JournalKey: staticKey})

	start := time.Now()
	progress, err := conv.Converge(ctx, live, manifest(ns, "2Gi"))
	took := time.Since(start)
	if err != nil || progress != converge.Waiting {
		t.Fatalf("Converge while the old object is held = %v, %v; want waiting", progress, err)
	}
	if took > notHeld {
		t.Errorf("Converge took %s while the old object is held, want under %s", took.Round(time.Millisecond), notHeld)
	}
	t.Logf("Converge returned %q after %s", progress, took.Round(time.Millisecond))

	// The garbage collector orphans the Pods and drops its finalizer; ours
	// keeps the object, and Resume keeps reporting Waiting without blocking.
	var held appsv1.StatefulSet
	poll(ctx, t, 60*time.Second, "only the hold finalizer left", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key(ns), &held); err != nil {
			return false, err
		}
		return slices.Equal(held.Finalizers, []string{holdFinalizer}), nil
	})
	if held.UID != before.stsUID || held.DeletionTimestamp == nil {
		t.Fatalf("held statefulset uid %s (was %s), deletionTimestamp %v; want the old object being deleted",
			held.UID, before.stsUID, held.DeletionTimestamp)
	}
	start = time.Now()
	progress, err = conv.Resume(ctx, key(ns))
	took = time.Since(start)
	if err != nil || progress != converge.Waiting {
		t.Fatalf("Resume while the old object is held = %v, %v; want waiting", progress, err)
	}
	if took > notHeld {
		t.Errorf("Resume took %s while the old object is held, want under %s", took.Round(time.Millisecond), notHeld)
	}
	if rec, err := j.Load(ctx, key(ns)); err != nil || rec == nil || rec.UID != string(before.stsUID) {
		t.Fatalf("journal while waiting = %+v, %v; want the record for %s", rec, err, before.stsUID)
	}

	held.Finalizers = nil
	if err := c.Update(ctx, &held); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	if progress, err = settle(ctx, t, conv, ns, converge.Waiting, nil); err != nil || progress != converge.Recreated {
		t.Fatalf("Resume after the finalizer was removed = %v, %v; want re-created", progress, err)
	}
	assertAdopted(ctx, t, c, ns, before, "2Gi", released)
	pods.assertNoChurn(ctx, t, c, ns)
	assertNoRecord(ctx, t, j, ns)
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, key(ns), &sts); err != nil {
		t.Fatal(err)
	}
	if len(sts.Finalizers) != 0 {
		t.Errorf("re-created statefulset has finalizers %v; the desired object had none", sts.Finalizers)
	}
}
