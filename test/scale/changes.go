package main

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// changeLog records what changed in the cluster among the objects the
// controller watches (StatefulSets, PVCs, VolumeClaimRollouts) and who
// changed it. "At rest" is only at rest if nothing changed; when the
// controller does reconcile or write during a rest window, this says why.
type changeLog struct {
	mu     sync.Mutex
	counts map[string]int // "Kind EVENT by manager (operation[ subresource])"
	first  map[string]string
	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// watchChanges starts watching from now on (no events for what exists).
func (r *runner) watchChanges(ctx context.Context) (*changeLog, error) {
	ctx, cancel := context.WithCancel(ctx)
	l := &changeLog{counts: map[string]int{}, first: map[string]string{}, cancel: cancel}
	for _, list := range []client.ObjectList{
		&appsv1.StatefulSetList{}, &corev1.PersistentVolumeClaimList{}, &v1alpha1.VolumeClaimRolloutList{},
	} {
		// A one-item list returns the current resourceVersion to watch from.
		if err := r.c.List(ctx, list, client.Limit(1)); err != nil {
			l.stop()
			return nil, err
		}
		rv := list.(metav1.ListInterface).GetResourceVersion()
		w, err := r.c.Watch(ctx, list, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			l.stop()
			return nil, err
		}
		kind := strings.TrimSuffix(reflect.TypeOf(list).Elem().Name(), "List")
		l.wg.Go(func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				l.record(kind, ev)
			}
		})
	}
	return l, nil
}

func (l *changeLog) record(kind string, ev watch.Event) {
	if ev.Type == watch.Bookmark {
		return
	}
	key := fmt.Sprintf("%s %s", kind, ev.Type)
	name := ""
	if obj, err := apimeta.Accessor(ev.Object); err == nil {
		name = obj.GetNamespace() + "/" + obj.GetName()
		if m := latestManager(obj.GetManagedFields()); m != "" {
			key += " by " + m
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[key]++
	if _, ok := l.first[key]; !ok {
		l.first[key] = name
	}
}

// latestManager names the field manager whose entry changed last; managed
// fields carry second-resolution times, so it is the best guess available.
func latestManager(entries []metav1.ManagedFieldsEntry) string {
	var best *metav1.ManagedFieldsEntry
	for i := range entries {
		e := &entries[i]
		if e.Time != nil && (best == nil || best.Time.Before(e.Time)) {
			best = e
		}
	}
	if best == nil {
		return ""
	}
	op := string(best.Operation)
	if best.Subresource != "" {
		op += " " + best.Subresource
	}
	return fmt.Sprintf("%s (%s)", best.Manager, op)
}

// take returns what changed since the last take, with an example object each.
func (l *changeLog) take() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]string, len(l.counts))
	for k, n := range l.counts {
		out[k] = fmt.Sprintf("%d, e.g. %s", n, l.first[k])
	}
	l.counts, l.first = map[string]int{}, map[string]string{}
	return out
}

func (l *changeLog) stop() {
	l.cancel()
	l.wg.Wait()
}
