package rollout_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

// offlineClaims makes the storage simulator expand these claims offline:
// their file systems grow only when their Pods are re-created.
func offlineClaims(t *testing.T, c client.Client, ns string, names ...string) {
	t.Helper()
	offlineClaimsAs(t, c, ns, "true", names...)
}

// offlineClaimsAs is offlineClaims with the simulator's annotation set to value.
func offlineClaimsAs(t *testing.T, c client.Client, ns, value string, names ...string) {
	t.Helper()
	for _, name := range names {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, storagesim.OfflineResizeAnnotation, value)
		if err := c.Patch(context.Background(), pvc, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
}

// evictions counts the evictions the controller asked for in ns, by the
// API server's answer (ok, 429, error).
func evictions(ns string) map[string]int {
	out := map[string]int{}
	for k, n := range controllerClient.writesIn(ns) {
		if what, ok := strings.CutPrefix(k, "eviction create "); ok {
			result, _, _ := strings.Cut(what, " ")
			out[result] += n
		}
	}
	return out
}

// disruptionBudget creates a PodDisruptionBudget over the Pods labelled
// app=name and waits until the disruption controller has counted them.
func disruptionBudget(t *testing.T, c client.Client, ns, name string, minAvailable int) *policyv1.PodDisruptionBudget {
	t.Helper()
	ctx := context.Background()
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptrTo(intstr.FromInt32(int32(minAvailable))),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
		},
	}
	if err := c.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, c, pdb)
	return pdb
}

// waitBudget waits until the disruption controller has observed the budget's spec.
func waitBudget(t *testing.T, c client.Client, pdb *policyv1.PodDisruptionBudget) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pdb), pdb); err != nil {
			return false, err
		}
		return pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.ExpectedPods > 0, nil
	})
	if err != nil {
		t.Fatalf("PodDisruptionBudget %s never observed: %+v", pdb.Name, pdb.Status)
	}
}

func ptrTo[T any](v T) *T { return &v }

// podWatch follows the Pods of a StatefulSet (name-0 … name-(n-1)) through a
// watch, which sees every change, and records the most that were down
// (missing, being deleted or not Ready) at once, and the order in which
// Pods went down.
type podWatch struct {
	mu      sync.Mutex
	pods    map[string]*corev1.Pod
	names   []string
	maxDown int
	downs   []string // names, in the order they went down
	down    map[string]bool
	started bool
	// stopped: errors from here on are the watch's end, not a failure.
	stopped bool
	stop    func()
	done    chan struct{}
	err     error
}

func watchPods(t *testing.T, ns, name string, n int) *podWatch {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, &corev1.PodList{}, client.InNamespace(ns))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pw := &podWatch{pods: map[string]*corev1.Pod{}, down: map[string]bool{}, done: make(chan struct{})}
	for i := range n {
		pw.names = append(pw.names, fmt.Sprintf("%s-%d", name, i))
	}
	pw.stop = func() {
		pw.mu.Lock()
		pw.stopped = true
		pw.mu.Unlock()
		cancel()
		w.Stop()
		<-pw.done
	}
	t.Cleanup(pw.stop)
	go pw.run(w)
	return pw
}

func (pw *podWatch) run(w watch.Interface) {
	defer close(pw.done)
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			pw.mu.Lock()
			if ev.Type == watch.Error && !pw.stopped {
				pw.err = fmt.Errorf("watch error: %v", ev.Object)
			}
			pw.mu.Unlock()
			continue
		}
		pw.mu.Lock()
		if ev.Type == watch.Deleted {
			delete(pw.pods, pod.Name)
		} else {
			pw.pods[pod.Name] = pod
		}
		pw.count()
		pw.mu.Unlock()
	}
}

// count updates the figures; the watch starts with an ADDED event per Pod,
// so Pods are counted from the moment every one was seen.
func (pw *podWatch) count() {
	if !pw.started && !pw.seenAll() {
		return
	}
	pw.started = true
	n := 0
	for _, name := range pw.names {
		p := pw.pods[name]
		isDown := p == nil || !p.DeletionTimestamp.IsZero() || !ready(p)
		if isDown {
			n++
			if !pw.down[name] {
				pw.downs = append(pw.downs, name)
			}
		}
		pw.down[name] = isDown
	}
	pw.maxDown = max(pw.maxDown, n)
}

func (pw *podWatch) seenAll() bool {
	for _, name := range pw.names {
		if pw.pods[name] == nil {
			return false
		}
	}
	return true
}

// result stops the watch and returns the most Pods down at once and the order they went down in.
func (pw *podWatch) result(t *testing.T) (int, []string) {
	t.Helper()
	pw.stop()
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.err != nil {
		t.Fatal(pw.err)
	}
	return pw.maxDown, append([]string(nil), pw.downs...)
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// unchangedFor checks, throughout the window (an observation, not a wait
// for something to happen), that the Pods keep their UIDs.
func unchangedFor(t *testing.T, c client.Client, ns string, uids map[string]types.UID, window time.Duration) {
	t.Helper()
	end := time.After(window)
	tick := time.NewTicker(fixtures.Poll)
	defer tick.Stop()
	for {
		if now := podUIDs(t, c, ns); !maps.Equal(now, uids) {
			t.Fatalf("Pods changed: UIDs %v, were %v", now, uids)
		}
		select {
		case <-end:
			return
		case <-tick.C:
		}
	}
}
