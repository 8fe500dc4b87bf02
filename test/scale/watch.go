package main

import (
	"context"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// watchUntil hands every object of list's kind (selected by opts) to see,
// first from a list and then from a watch started at that list's version,
// until done reports true. A watch that ends (a timeout, a compaction)
// restarts from a new list. Every second it calls tick, whose error ends the
// wait.
//
// Both procedures wait for their end this way, so the waiting loads the API
// server alike: at 2,000 StatefulSets a list of every claim and StatefulSet
// each half second made it serialise megabytes a second. Written by hand
// rather than with client-go's watch.UntilWithSync: its informer would keep a
// copy of every object, which the run never needs.
func (r *runner) watchUntil(ctx context.Context, list client.ObjectList, see func(runtime.Object), done func() bool,
	tick func() error, opts ...client.ListOption) error {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for !done() {
		listed := list.DeepCopyObject().(client.ObjectList)
		if err := r.c.List(ctx, listed, opts...); err != nil {
			return err
		}
		if err := apimeta.EachListItem(listed, func(o runtime.Object) error { see(o); return nil }); err != nil {
			return err
		}
		from := &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: listed.GetResourceVersion()}}
		w, err := r.c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), append(opts, from)...)
		if err != nil {
			return err
		}
		err = func() error {
			defer w.Stop()
			for !done() {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						return nil
					}
					see(ev.Object)
				case <-ticker.C:
					if err := tick(); err != nil {
						return err
					}
				case <-ctx.Done():
					return fmt.Errorf("watching %T: %w", list, ctx.Err())
				}
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return nil
}
