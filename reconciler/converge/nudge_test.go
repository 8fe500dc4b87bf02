package converge_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
)

// A ControllerRevision the StatefulSet controller left unadopted (as it did
// after an etcd restart in the chaos run) holds the convergence back
// (Adopting) and, once the StatefulSet has gone unadopted for
// AdoptionNudgeAfter, the Converger touches it: the real StatefulSet
// controller syncs it and adopts the revision, so the convergence can go on.
// Within AdoptionNudgeAfter of its creation or of the last nudge nothing is
// written.
func TestConvergeNudgesAStalledAdoption(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, _ := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	_, _, revs := list(ctx, t, c, ns)
	if len(revs) == 0 {
		t.Fatal("the StatefulSet has no ControllerRevision")
	}
	// An orphan the StatefulSet controller does not hear of: it syncs a
	// StatefulSet on the object's own events, not on its revisions'.
	orphan := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: stsName + "-orphan", Labels: revs[0].Labels},
		Data:       revs[0].Data,
		Revision:   revs[0].Revision + 1,
	}
	if err := c.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}

	now := live.CreationTimestamp.Add(time.Second)
	conv := converge.New(converge.Options{Client: c, Journal: cmJournal{c}, JournalKey: staticKey, Now: func() time.Time { return now }})
	nudged := func() string {
		t.Helper()
		if err := c.Get(ctx, key(ns), live); err != nil {
			t.Fatal(err)
		}
		return live.Annotations[v1alpha1.AdoptionNudgedAnnotation]
	}
	progress, err := conv.Converge(ctx, live, manifest(ns, "2Gi"))
	if err != nil || progress != converge.Adopting {
		t.Fatalf("Converge with a revision unadopted: %v, %v; want Adopting", progress, err)
	}
	if at := nudged(); at != "" {
		t.Fatalf("nudged at %s, a second after the StatefulSet's creation", at)
	}

	now = live.CreationTimestamp.Add(11 * time.Second)
	if err := c.Get(ctx, client.ObjectKeyFromObject(orphan), orphan); err != nil || controllerUID(orphan.OwnerReferences) != "" {
		t.Fatalf("the revision was adopted before any nudge (%v): the test proves nothing", err)
	}
	progress, err = conv.Converge(ctx, live, manifest(ns, "2Gi"))
	if err != nil || progress != converge.Adopting {
		t.Fatalf("Converge 11s after the creation: %v, %v; want Adopting", progress, err)
	}
	want := now.UTC().Format(time.RFC3339)
	if at := nudged(); at != want {
		t.Fatalf("%s = %q, want %q: the StatefulSet was not nudged", v1alpha1.AdoptionNudgedAnnotation, at, want)
	}
	if live.Generation != 1 {
		t.Errorf("the nudge changed the spec: generation %d", live.Generation)
	}

	now = now.Add(time.Second)
	if err := converge.NudgeAdoption(conv, ctx, live, "test"); err != nil {
		t.Fatal(err)
	}
	if at := nudged(); at != want {
		t.Errorf("nudged again a second after the last nudge (%s)", at)
	}

	poll(ctx, t, time.Minute, "the StatefulSet controller to adopt the revision after the nudge", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(orphan), orphan); err != nil {
			return false, err
		}
		if uid := controllerUID(orphan.OwnerReferences); uid != live.UID {
			return false, fmt.Errorf("revision %s controlled by %q", orphan.Name, uid)
		}
		return true, nil
	})
}
