package converge_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/reconciler/converge"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Scenario 1: the volumeClaimTemplates grow; the StatefulSet is replaced while
// its Pods, PVCs and revision history stay and are re-adopted.
func TestConvergeReplacesTemplatesKeepingPods(t *testing.T) {
	ctx := ctxFor(t)
	c, cs := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	before := take(ctx, t, c, ns)
	pods := watchPods(ctx, t, cs, ns)
	j := cmJournal{c}
	hc := &hookClient{Client: c}
	conv := converge.New(converge.Options{Client: hc, Journal: j, JournalKey: staticKey})

	start := time.Now()
	progress, err := conv.Converge(ctx, live, manifest(ns, "2Gi"))
	returned := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Converge returned %q after %s", progress, returned.Round(time.Millisecond))
	if progress, err = settle(ctx, t, conv, ns, progress, err); err != nil || progress != converge.Recreated {
		t.Fatalf("Converge, then Resume while waiting = %v, %v; want re-created", progress, err)
	}
	deleted, created := hc.times()
	t.Logf("delete sent at +%s, old object gone and create sent at +%s",
		deleted.Sub(start).Round(time.Millisecond), created.Sub(start).Round(time.Millisecond))

	sts, _ := assertAdopted(ctx, t, c, ns, before, "2Gi", start)
	pods.assertNoChurn(ctx, t, c, ns)
	assertNoRecord(ctx, t, j, ns)
	if !slices.Contains(managers(sts), converge.DefaultFieldOwner) {
		t.Errorf("managers %v lack %s", managers(sts), converge.DefaultFieldOwner)
	}
	if sts.Annotations["example.com/owner"] != "team-a" || *sts.Spec.Replicas != replicas {
		t.Errorf("metadata or spec not carried over: annotations %v replicas %d", sts.Annotations, *sts.Spec.Replicas)
	}

	// Idempotent: converging the converged object again changes nothing and
	// in particular does not re-create it.
	if progress, err := conv.Converge(ctx, sts, manifest(ns, "2Gi")); err != nil || progress != converge.Updated {
		t.Fatalf("second Converge = %v, %v; want updated in place", progress, err)
	}
	var again appsv1.StatefulSet
	if err := c.Get(ctx, key(ns), &again); err != nil {
		t.Fatal(err)
	}
	if again.UID != sts.UID {
		t.Errorf("second Converge re-created the StatefulSet (uid %s → %s)", sts.UID, again.UID)
	}
}

// Scenario 2: the process dies between the delete and the create. The record
// is in the journal, the StatefulSet disappears (its Pods keep running,
// orphaned), and a new Converger's Resume re-creates it.
func TestResumeAfterCrashBetweenDeleteAndCreate(t *testing.T) {
	ctx := ctxFor(t)
	c, cs := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	before := take(ctx, t, c, ns)
	pods := watchPods(ctx, t, cs, ns)
	j := cmJournal{c}

	crashCtx, crash := context.WithCancel(ctx)
	dying := converge.New(converge.Options{Client: &hookClient{Client: c, afterDelete: func(context.Context) { crash() }}, Journal: j, JournalKey: staticKey})
	start := time.Now()
	_, err := dying.Converge(crashCtx, live, manifest(ns, "2Gi"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Converge after crash = %v, want context.Canceled", err)
	}

	rec, err := j.Load(ctx, key(ns))
	if err != nil || rec == nil {
		t.Fatalf("journal after crash: %v, %v; want the record", rec, err)
	}
	if rec.UID != string(before.stsUID) {
		t.Errorf("record uid %s, want the deleted object's %s", rec.UID, before.stsUID)
	}
	var recorded appsv1.StatefulSet
	if err := json.Unmarshal(rec.Object.Raw, &recorded); err != nil {
		t.Fatal(err)
	}
	if got := recorded.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("recorded template storage %s, want 2Gi", got.String())
	}

	// The garbage collector finishes the orphan delete without us.
	poll(ctx, t, 60*time.Second, "statefulset gone", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key(ns), &appsv1.StatefulSet{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	orphans, _, _ := list(ctx, t, c, ns)
	if len(orphans) != replicas {
		t.Fatalf("%d pods while the StatefulSet is gone, want %d orphans", len(orphans), replicas)
	}
	for _, p := range orphans {
		if controllerUID(p.OwnerReferences) != "" {
			t.Errorf("pod %s still has a controller while the StatefulSet is gone", p.Name)
		}
	}
	t.Logf("gone %s after start", time.Since(start).Round(time.Millisecond))

	restarted := converge.New(converge.Options{Client: c, Journal: j, JournalKey: staticKey})
	resumedAt := time.Now()
	progress, err := restarted.Resume(ctx, key(ns))
	if err != nil || progress != converge.Recreated {
		t.Fatalf("Resume = %v, %v; want re-created", progress, err)
	}
	assertAdopted(ctx, t, c, ns, before, "2Gi", resumedAt)
	pods.assertNoChurn(ctx, t, c, ns)
	assertNoRecord(ctx, t, j, ns)

	if progress, err := restarted.Resume(ctx, key(ns)); err != nil || progress != converge.NothingRecorded {
		t.Errorf("second Resume = %v, %v; want nothing recorded", progress, err)
	}
}

// Scenario 3a: live was read, then changed (a GitOps tool re-applied it).
// Converge refuses with a conflict before writing anything.
func TestConvergeConflictOnStaleLive(t *testing.T) {
	ctx := ctxFor(t)
	c, _ := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	reapply(ctx, t, c, ns)
	j := cmJournal{c}

	_, err := converge.New(converge.Options{Client: c, Journal: j, JournalKey: staticKey}).Converge(ctx, live, manifest(ns, "2Gi"))
	if !apierrors.IsConflict(err) {
		t.Fatalf("Converge on a stale object = %v, want a conflict", err)
	}
	assertUntouched(ctx, t, c, ns, live)
	assertNoRecord(ctx, t, j, ns)
}

// Scenario 3b: the object changes after the record is written and before the
// delete: the delete's preconditions refuse, nothing is deleted, the record is
// dropped.
func TestConvergeDeletePreconditionFails(t *testing.T) {
	ctx := ctxFor(t)
	c, _ := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	j := hookJournal{cmJournal: cmJournal{c}, afterSave: func(ctx context.Context) error {
		reapply(ctx, t, c, ns)
		return nil
	}}

	_, err := converge.New(converge.Options{Client: c, Journal: j, JournalKey: staticKey}).Converge(ctx, live, manifest(ns, "2Gi"))
	if !apierrors.IsConflict(err) {
		t.Fatalf("Converge = %v, want a conflict from the delete precondition", err)
	}
	assertUntouched(ctx, t, c, ns, live)
	assertNoRecord(ctx, t, j.cmJournal, ns)
}

// reapply changes the StatefulSet the way a GitOps tool's re-apply does: a new
// resourceVersion on the same object.
func reapply(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"example.com/applied":"again"}}}`))
	if err := c.Patch(ctx, &appsv1.StatefulSet{ObjectMeta: key2meta(ns)}, patch, client.FieldOwner("kustomize-controller")); err != nil {
		t.Fatal(err)
	}
}

// assertUntouched checks that live still exists, is not being deleted and
// kept its template.
func assertUntouched(ctx context.Context, t *testing.T, c client.Client, ns string, live *appsv1.StatefulSet) {
	t.Helper()
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, key(ns), &sts); err != nil {
		t.Fatalf("statefulset after refused Converge: %v", err)
	}
	if sts.UID != live.UID || sts.DeletionTimestamp != nil {
		t.Errorf("statefulset uid %s (was %s), deletionTimestamp %v", sts.UID, live.UID, sts.DeletionTimestamp)
	}
	if got := sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("template storage %s, want the old 1Gi", got.String())
	}
}
