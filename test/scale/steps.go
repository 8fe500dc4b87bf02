package main

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// timeline records, from a watch of every PVC, when each claim was first
// seen requesting a size (the patch) and first seen at that capacity (the
// storage done). It splits a rollout's time into what the controller adds
// (from a claim's slot freeing to its patch) and what the storage adds (from
// the patch to the capacity, beyond the simulated delay), which the
// end-to-end time per StatefulSet cannot tell apart.
type timeline struct {
	size   resource.Quantity
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	requested map[client.ObjectKey]time.Time
	grown     map[client.ObjectKey]time.Time
	// closed is set when the watch ended before stop: the timeline is then
	// incomplete and says so instead of reporting short steps.
	closed bool
}

// watchTimeline starts the watch at the current resourceVersion, so only
// changes from now on are recorded. client-go's RetryWatcher resumes it from
// the last event seen when the API server ends it (a timeout, a watcher it
// found too slow under the bump's load), so a closed watch loses nothing;
// only a resume the server refuses (its history compacted) ends it early.
func (r *runner) watchTimeline(ctx context.Context, size string) (*timeline, error) {
	ctx, cancel := context.WithCancel(ctx)
	t := &timeline{
		size: resource.MustParse(size), cancel: cancel,
		requested: map[client.ObjectKey]time.Time{}, grown: map[client.ObjectKey]time.Time{},
	}
	var list corev1.PersistentVolumeClaimList
	if err := r.c.List(ctx, &list, client.Limit(1)); err != nil {
		cancel()
		return nil, err
	}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return r.c.Watch(ctx, &corev1.PersistentVolumeClaimList{}, &client.ListOptions{Raw: &o})
	}}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, lw)
	if err != nil {
		cancel()
		return nil, err
	}
	t.wg.Go(func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if pvc, ok := ev.Object.(*corev1.PersistentVolumeClaim); ok && ev.Type == watch.Modified && r.ours(pvc.Namespace) {
				t.record(pvc, time.Now())
			}
			if ev.Type == watch.Error {
				r.logf("the PVC watch of the step timeline ended: %v", apierrors.FromObject(ev.Object))
			}
		}
		t.mu.Lock()
		t.closed = ctx.Err() == nil
		t.mu.Unlock()
	})
	return t, nil
}

func (t *timeline) record(pvc *corev1.PersistentVolumeClaim, at time.Time) {
	key := client.ObjectKeyFromObject(pvc)
	t.mu.Lock()
	defer t.mu.Unlock()
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok && q.Cmp(t.size) == 0 {
		if _, seen := t.requested[key]; !seen {
			t.requested[key] = at
		}
	}
	if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok && q.Cmp(t.size) == 0 {
		if _, seen := t.grown[key]; !seen {
			t.grown[key] = at
		}
	}
}

func (t *timeline) stop() {
	t.cancel()
	t.wg.Wait()
}

// stepReport is the per-step split of a bump, in seconds.
type stepReport struct {
	// Steps is the number of claims with both times recorded.
	Steps int `json:"steps"`
	// Overhead is Controller + Storage of each step: the step's time beyond
	// the simulated delay.
	Overhead summary `json:"overheadSeconds"`
	// Controller is, per claim, from the moment the controller could patch
	// it (its StatefulSet re-created, or an earlier claim's slot freed by its
	// capacity growing) to the patch seen.
	Controller summary `json:"controllerSeconds"`
	// Storage is, per claim, from the patch seen to the capacity seen, minus
	// the simulated delay: the storage simulator's (and API server's) share.
	Storage summary `json:"storageSeconds"`
	// Completion is, per StatefulSet, from its last claim's capacity to its
	// rollout seen Ready: the report's own lag.
	Completion summary `json:"completionSeconds"`
	Incomplete string  `json:"incomplete,omitempty"`
}

// steps splits each StatefulSet's rollout into steps. A StatefulSet's
// claims are taken in patch order; with concurrency c, the i-th patch could
// start when the (i−c)-th capacity grew (or at the re-create for the first
// c). recreated and ready are per StatefulSet; claims maps a StatefulSet to
// its PVC keys.
func (t *timeline) steps(claims map[client.ObjectKey][]client.ObjectKey, recreated, ready map[client.ObjectKey]time.Time, concurrency int, delay time.Duration) stepReport {
	t.mu.Lock()
	defer t.mu.Unlock()
	var over, ctrl, stor, done []float64
	var rep stepReport
	missing := 0
	for sts, keys := range claims {
		var patched, grown []time.Time
		for _, k := range keys {
			p, okP := t.requested[k]
			g, okG := t.grown[k]
			if !okP || !okG {
				missing++
				continue
			}
			patched = append(patched, p)
			grown = append(grown, g)
			stor = append(stor, g.Sub(p).Seconds()-delay.Seconds())
		}
		if len(patched) != len(keys) {
			continue
		}
		byPatch := make([]int, len(keys))
		for i := range byPatch {
			byPatch[i] = i
		}
		slices.SortFunc(byPatch, func(a, b int) int { return patched[a].Compare(patched[b]) })
		sortedGrown := slices.Clone(grown)
		slices.SortFunc(sortedGrown, time.Time.Compare)
		for i, k := range byPatch {
			start := recreated[sts]
			if i >= concurrency {
				start = sortedGrown[i-concurrency]
			}
			c := max(patched[k].Sub(start).Seconds(), 0)
			ctrl = append(ctrl, c)
			over = append(over, c+grown[k].Sub(patched[k]).Seconds()-delay.Seconds())
		}
		if r, ok := ready[sts]; ok {
			done = append(done, r.Sub(sortedGrown[len(sortedGrown)-1]).Seconds())
		}
	}
	rep.Steps = len(over)
	rep.Overhead, rep.Controller, rep.Storage, rep.Completion = summarize(over), summarize(ctrl), summarize(stor), summarize(done)
	switch {
	case t.closed:
		rep.Incomplete = "the PVC watch could not be resumed during the bump; the steps are those seen until then"
	case missing > 0:
		rep.Incomplete = "claims without both a patch and a capacity seen: " + strconv.Itoa(missing)
	}
	return rep
}
