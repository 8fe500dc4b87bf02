package converge_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// snapshot is what must survive a convergence unchanged.
type snapshot struct {
	stsUID    types.UID
	revision  string               // status.updateRevision, "web-<hash>"
	pods      map[string]types.UID // name → uid
	hashes    map[string]string    // name → controller-revision-hash label
	pvcs      map[string]types.UID
	revisions map[string]types.UID // ControllerRevision name → uid
}

func take(ctx context.Context, t *testing.T, c client.Client, ns string) snapshot {
	t.Helper()
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, key(ns), &sts); err != nil {
		t.Fatal(err)
	}
	s := snapshot{stsUID: sts.UID, revision: sts.Status.UpdateRevision,
		pods: map[string]types.UID{}, hashes: map[string]string{}, pvcs: map[string]types.UID{}, revisions: map[string]types.UID{}}
	pods, pvcs, revs := list(ctx, t, c, ns)
	for _, p := range pods {
		s.pods[p.Name], s.hashes[p.Name] = p.UID, p.Labels[appsv1.ControllerRevisionHashLabelKey]
	}
	for _, p := range pvcs {
		s.pvcs[p.Name] = p.UID
		// The Pods could only be scheduled because the PV binder bound the
		// claims to the reserved PVs; a Pending claim would mean a test setup
		// that no longer works as documented in createPVs.
		if p.Status.Phase != corev1.ClaimBound {
			t.Fatalf("pvc %s is %s, want Bound", p.Name, p.Status.Phase)
		}
	}
	for _, r := range revs {
		s.revisions[r.Name] = r.UID
	}
	if len(s.pods) != replicas || len(s.pvcs) != replicas || len(s.revisions) == 0 {
		t.Fatalf("unexpected starting point: %d pods, %d pvcs, %d revisions", len(s.pods), len(s.pvcs), len(s.revisions))
	}
	return s
}

func list(ctx context.Context, t *testing.T, c client.Client, ns string) ([]corev1.Pod, []corev1.PersistentVolumeClaim, []appsv1.ControllerRevision) {
	t.Helper()
	var pods corev1.PodList
	var pvcs corev1.PersistentVolumeClaimList
	var revs appsv1.ControllerRevisionList
	for _, l := range []client.ObjectList{&pods, &pvcs, &revs} {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	return pods.Items, pvcs.Items, revs.Items
}

func controllerUID(refs []metav1.OwnerReference) types.UID {
	if ref := metav1.GetControllerOfNoCopy(&metav1.ObjectMeta{OwnerReferences: refs}); ref != nil {
		return ref.UID
	}
	return ""
}

// adoption is when, after start, the new StatefulSet owned every Pod and
// ControllerRevision, and when it reported all replicas Ready again.
type adoption struct{ adopted, ready time.Duration }

// assertAdopted waits until a StatefulSet other than before's owns every Pod
// and ControllerRevision and is Ready, then checks that nothing was replaced:
// the same Pods (UIDs), the same revision hash (so no rolling update), the same
// PVCs, and no owner reference left to the deleted object. It returns the new
// object and the times measured from start.
func assertAdopted(ctx context.Context, t *testing.T, c client.Client, ns string, before snapshot,
	wantStorage string, start time.Time) (*appsv1.StatefulSet, adoption) {
	t.Helper()
	var sts appsv1.StatefulSet
	var took adoption
	poll(ctx, t, 90*time.Second, "re-adoption and 3/3 Ready", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key(ns), &sts); err != nil {
			return false, err
		}
		if sts.UID == before.stsUID {
			return false, nil
		}
		pods, _, revs := list(ctx, t, c, ns)
		owned := len(pods) == replicas
		for _, p := range pods {
			owned = owned && controllerUID(p.OwnerReferences) == sts.UID
		}
		for _, r := range revs {
			owned = owned && controllerUID(r.OwnerReferences) == sts.UID
		}
		if owned && took.adopted == 0 {
			took.adopted = time.Since(start)
		}
		ready := sts.Status.ObservedGeneration == sts.Generation && sts.Status.ReadyReplicas == replicas &&
			sts.Status.CurrentRevision == sts.Status.UpdateRevision
		if owned && ready {
			took.ready = time.Since(start)
		}
		return owned && ready, nil
	})

	got := sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]
	if want := resource.MustParse(wantStorage); got.Cmp(want) != 0 {
		t.Errorf("template storage = %s, want %s", got.String(), wantStorage)
	}
	if sts.Status.UpdateRevision != before.revision {
		t.Errorf("updateRevision = %s, want %s: the template hash changed, Pods would be rolled", sts.Status.UpdateRevision, before.revision)
	}
	pods, pvcs, revs := list(ctx, t, c, ns)
	for _, p := range pods {
		if p.UID != before.pods[p.Name] {
			t.Errorf("pod %s uid %s, was %s: the Pod was re-created", p.Name, p.UID, before.pods[p.Name])
		}
		if h := p.Labels[appsv1.ControllerRevisionHashLabelKey]; h != before.hashes[p.Name] {
			t.Errorf("pod %s controller-revision-hash %s, was %s", p.Name, h, before.hashes[p.Name])
		}
		if p.DeletionTimestamp != nil {
			t.Errorf("pod %s is being deleted", p.Name)
		}
	}
	for _, p := range pvcs {
		if p.UID != before.pvcs[p.Name] {
			t.Errorf("pvc %s uid %s, was %s", p.Name, p.UID, before.pvcs[p.Name])
		}
		if slices.ContainsFunc(p.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == before.stsUID }) {
			t.Errorf("pvc %s still refers to the deleted StatefulSet", p.Name)
		}
	}
	for _, r := range revs {
		if r.UID != before.revisions[r.Name] {
			t.Errorf("controllerrevision %s uid %s, was %s: history was rebuilt instead of adopted", r.Name, r.UID, before.revisions[r.Name])
		}
	}
	if len(revs) != len(before.revisions) {
		t.Errorf("%d controllerrevisions, was %d", len(revs), len(before.revisions))
	}
	t.Logf("Pods and ControllerRevisions adopted %s after start, 3/3 Ready after %s",
		took.adopted.Round(time.Millisecond), took.ready.Round(time.Millisecond))
	return &sts, took
}

// podWatch records every Pod event in ns from now on; a Pod deleted or created
// during the convergence shows up as Deleted or Added, which polling could miss.
type podWatch struct {
	mu     sync.Mutex
	events []watch.Event
	w      watch.Interface
	done   chan struct{}
}

func watchPods(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) *podWatch {
	t.Helper()
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	pw := &podWatch{w: w, done: make(chan struct{})}
	go func() {
		defer close(pw.done)
		for ev := range w.ResultChan() {
			pw.mu.Lock()
			pw.events = append(pw.events, ev)
			pw.mu.Unlock()
		}
	}()
	t.Cleanup(w.Stop)
	return pw
}

// assertNoChurn fails on any Pod added or deleted since watchPods, or a watch
// error (events would have been missed). Watch events arrive in order, so it
// first writes a marker annotation on one Pod and waits for that event: every
// earlier event has then been received, and stopping cannot lose one.
func (pw *podWatch) assertNoChurn(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	marker := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: stsName + "-0"}}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"test/marker":"`+t.Name()+`"}}}`))
	if err := c.Patch(ctx, marker, patch); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, 30*time.Second, "marker event on the pod watch", func(context.Context) (bool, error) {
		pw.mu.Lock()
		defer pw.mu.Unlock()
		return slices.ContainsFunc(pw.events, func(ev watch.Event) bool {
			p, ok := ev.Object.(*corev1.Pod)
			return ok && p.ResourceVersion == marker.ResourceVersion
		}), nil
	})
	pw.mu.Lock()
	events := slices.Clone(pw.events)
	pw.mu.Unlock()
	pw.w.Stop()
	<-pw.done

	modified := 0
	for _, ev := range events {
		switch ev.Type {
		case watch.Modified:
			modified++
		case watch.Added, watch.Deleted:
			p := ev.Object.(*corev1.Pod)
			t.Errorf("pod %s %s (uid %s) during convergence", p.Name, ev.Type, p.UID)
		default:
			t.Errorf("pod watch %s: %v", ev.Type, ev.Object)
		}
	}
	// Orphaning and adoption each rewrite the owner references of all Pods.
	if modified < 2*replicas {
		t.Errorf("%d pod updates, want at least %d (orphaned and re-adopted)", modified, 2*replicas)
	}
}

func assertNoRecord(ctx context.Context, t *testing.T, j cmJournal, ns string) {
	t.Helper()
	rec, err := j.Load(ctx, key(ns))
	if err != nil {
		t.Fatal(err)
	}
	if rec != nil {
		t.Errorf("journal still holds a record for uid %s", rec.UID)
	}
}

func managers(sts *appsv1.StatefulSet) []string {
	var out []string
	for _, m := range sts.ManagedFields {
		out = append(out, m.Manager)
	}
	return out
}
