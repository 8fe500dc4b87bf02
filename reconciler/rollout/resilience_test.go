package rollout_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// A controller that died between the orphan delete and the create finds the
// record in the VolumeClaimRollout and re-creates the StatefulSet; the Pods
// are re-adopted, not restarted, and the new template's claims are rolled out.
func TestInterruptedRecreateIsFinishedFromTheRolloutRecord(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "pg", 2, classExpandable, "1Gi")
	createReady(t, c, sts)
	// A controller that restarts finds the record in its synced cache; here
	// the delete finishes once the running controller's cache holds it.
	interruptedRecreate(t, c, client.ObjectKeyFromObject(sts), func(ctx context.Context, key client.ObjectKey) (bool, error) {
		var cached v1alpha1.VolumeClaimRollout
		if err := controllerCache.Get(ctx, key, &cached); err != nil {
			return false, err
		}
		return cached.Status.PendingRecreate != nil, nil
	})
}

// The StatefulSet's delete event can overtake the record's write into the
// controller's cache: the two come by different watches, and the delete of
// an orphaning StatefulSet is done in milliseconds. A controller whose cache
// never shows the record still finishes the re-create, from the API
// server's copy (before, it forgot the StatefulSet it had deleted).
func TestRecreateIsFinishedBeforeTheCacheSeesTheRecord(t *testing.T) {
	c := started(t)
	scopedControllerWithCache(t, "journal-blind", func(c cache.Cache) cache.Cache { return journalBlindCache{c} }, nil)
	ns := namespace(t, c)
	sts := scopedStatefulSet(ns, "pg", "journal-blind", 2, recoveryCommit())
	createReady(t, c, sts)
	interruptedRecreate(t, c, client.ObjectKeyFromObject(sts), nil)
}

// journalBlindCache serves VolumeClaimRollouts without
// status.pendingRecreate: the copy of a cache that has not seen the record
// yet.
type journalBlindCache struct{ cache.Cache }

func (c journalBlindCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Cache.Get(ctx, key, obj, opts...)
	if vcr, ok := obj.(*v1alpha1.VolumeClaimRollout); ok && err == nil {
		vcr.Status.PendingRecreate = nil
	}
	return err
}

// interruptedRecreate plays a controller that died right after its orphan
// delete, for the ready StatefulSet of key at 1Gi: the StatefulSet is being
// deleted and the record of a re-create at 2Gi is written (once before
// holds, when given, the delete may finish). Then nothing but the record
// tells anyone to create it again; it checks that the controller does, with
// the Pods kept and the claims rolled out.
//
// A finalizer of the test's holds the delete until the record is written: a
// record beside a StatefulSet that is not being deleted describes a delete
// that never happened, and any reconcile in between would rightly drop it.
func interruptedRecreate(t *testing.T, c client.Client, key client.ObjectKey, before func(context.Context, client.ObjectKey) (bool, error)) {
	t.Helper()
	ctx := context.Background()
	podUIDs := podUIDsOf(t, c, key.Namespace)
	var live appsv1.StatefulSet
	if err := c.Get(ctx, key, &live); err != nil {
		t.Fatal(err)
	}
	desired := live.DeepCopy()
	fixtures.SetTemplateSize("2Gi")(desired)
	// The controller's key: the test plays the controller that died.
	jkey, err := rollout.LoadJournalKey(ctx, c, c, journalKeyOf)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := converge.Record(jkey, string(live.UID), desired)
	if err != nil {
		t.Fatal(err)
	}
	const hold = "claimwarden.test/hold-delete"
	held := live.DeepCopy()
	controllerutil.AddFinalizer(held, hold)
	if err := c.Patch(ctx, held, client.MergeFrom(&live)); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, held, client.PropagationPolicy(metav1.DeletePropagationOrphan),
		client.Preconditions{UID: &live.UID}); err != nil {
		t.Fatal(err)
	}
	// The garbage collector and the controller write the rollout meanwhile.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vcr := &v1alpha1.VolumeClaimRollout{}
		if err := c.Get(ctx, key, vcr); err != nil {
			return err
		}
		vcr.Status.PendingRecreate = &rec
		return c.Status().Update(ctx, vcr)
	})
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		err = wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
			return before(ctx, key)
		})
		if err != nil {
			t.Fatalf("waiting to let the delete of StatefulSet %s finish: %v", key, err)
		}
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur appsv1.StatefulSet
		if err := c.Get(ctx, key, &cur); err != nil {
			return err
		}
		base := cur.DeepCopy()
		controllerutil.RemoveFinalizer(&cur, hold)
		return c.Patch(ctx, &cur, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		t.Fatal(err)
	}

	var recreated appsv1.StatefulSet
	err = wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, &recreated); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return recreated.UID != live.UID, nil
	})
	if err != nil {
		t.Fatalf("StatefulSet %s not re-created from the record: %v", key, err)
	}
	got := recreated.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]
	if got.String() != "2Gi" {
		t.Errorf("re-created with template %s, want 2Gi", got.String())
	}
	done := waitRollout(t, c, key, "Ready at 2Gi with the record cleared", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.PendingRecreate == nil && v.Status.Counts.Capacity == "4Gi"
	})
	if len(done.OwnerReferences) != 1 || done.OwnerReferences[0].UID != recreated.UID {
		t.Errorf("rollout owners %+v, want only the re-created StatefulSet %s", done.OwnerReferences, recreated.UID)
	}
	if after := podUIDsOf(t, c, key.Namespace); !equalMaps(podUIDs, after) {
		t.Errorf("Pods changed: before %v, after %v", podUIDs, after)
	}
}

// A rejected patch is not repeated by events that change nothing relevant:
// annotating the StatefulSet triggers reconciles but no further patch until
// the back-off has passed.
func TestRejectedPatchIsNotRetriedInALoop(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "loop", 1, classUnbound, "1Gi")
	if err := c.Create(ctx, sts); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(sts)
	waitRollout(t, c, key, "seeing the claim", func(v *v1alpha1.VolumeClaimRollout) bool {
		return v.Status.Counts.Total == 1 && v.Status.Claims[0].From != ""
	})
	if err := fixtures.ReplaceTemplates(ctx, c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, key, "Stalled", stalled)
	// The claim's applies, as the controller's client sent them: the patch
	// counter is the process's, and stalled rollouts of earlier tests retry
	// on their own back-off meanwhile.
	applies := func() int {
		return controllerClient.writesIn(ns)["apply *v1.PersistentVolumeClaimApplyConfiguration/data-loop-0"]
	}
	rejected := applies()
	if rejected == 0 {
		t.Fatal("no apply of claim data-loop-0 logged: the log's key format changed?")
	}
	reconciles := counter(t, "controller_runtime_reconcile_total", "controller", "volumeclaimrollout")
	began := time.Now()

	// Each annotation is an update event the controller reconciles.
	for i := range 5 {
		var live appsv1.StatefulSet
		if err := c.Get(ctx, key, &live); err != nil {
			t.Fatal(err)
		}
		if live.Annotations == nil {
			live.Annotations = map[string]string{}
		}
		live.Annotations["touched"] = strings.Repeat("x", i+1)
		if err := c.Update(ctx, &live); err != nil {
			t.Fatal(err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(context.Context) (bool, error) {
		return counter(t, "controller_runtime_reconcile_total", "controller", "volumeclaimrollout") >= reconciles+5, nil
	})
	if err != nil {
		t.Fatal("the controller did not reconcile the annotated StatefulSet")
	}
	// The back-off starts at one second in these tests: a patch repeated on
	// each event shows as five, and on a loaded machine, where this takes
	// seconds, the back-off allows at most one retry per second elapsed.
	elapsed := time.Since(began)
	if more := applies() - rejected; more >= 5 || float64(more) > elapsed.Seconds() {
		t.Errorf("%d more patches of the rejected claim after 5 unrelated events in %s, want none (at most one a second)", more, elapsed.Round(time.Millisecond))
	}
}

// counter sums a counter of the controller-runtime registry over the series
// whose label has value.
func counter(t *testing.T, name, label, value string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

func podUIDsOf(t *testing.T, c client.Client, ns string) map[string]string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = string(p.UID)
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
