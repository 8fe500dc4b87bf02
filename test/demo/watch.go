package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// source is one kind of object to follow: list is an empty list of that kind
// (its watch yields the item type), opts narrow it, and rv is the
// resourceVersion to start after ("" lists first and starts from there).
type source struct {
	list client.ObjectList
	opts []client.ListOption
	rv   string
}

// named narrows a source to the object ns/name.
func named(ns, name string) []client.ListOption {
	return []client.ListOption{client.InNamespace(ns), client.MatchingFields{"metadata.name": name}}
}

// update is one version of a followed object, or its deletion.
type update struct {
	obj     client.Object
	deleted bool
}

// follower merges the watches of several sources into one stream, so that a
// story prints what happens to different objects in the order it happens.
// Watching from a resourceVersion replays every write after it, even those a
// poll would miss between two reads (a Kustomization failing for a second).
type follower struct {
	updates chan update
	errs    chan error
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// follow starts following sources. Sources without rv are listed first, so
// every change after follow returns is seen.
func (cl *cluster) follow(ctx context.Context, sources ...source) (*follower, error) {
	for i, s := range sources {
		if s.rv != "" {
			continue
		}
		list := s.list.DeepCopyObject().(client.ObjectList)
		if err := cl.client.List(ctx, list, s.opts...); err != nil {
			return nil, fmt.Errorf("listing %T: %w", s.list, err)
		}
		sources[i].rv = list.GetResourceVersion()
	}
	wctx, cancel := context.WithCancel(ctx)
	f := &follower{updates: make(chan update), errs: make(chan error, len(sources)), cancel: cancel}
	for _, s := range sources {
		f.wg.Go(func() {
			// stream returns only on an error; after stop that is the cancel.
			if err := cl.stream(wctx, s, f.updates); wctx.Err() == nil {
				f.errs <- err
			}
		})
	}
	return f, nil
}

// stop ends the watches.
func (f *follower) stop() {
	f.cancel()
	f.wg.Wait()
}

// until calls fn with every update until fn returns true or an error, timeout
// passes, ctx ends, a watch fails, or a component dies (reported at once, not
// at the deadline).
func (f *follower) until(ctx context.Context, cl *cluster, timeout time.Duration, fn func(update) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	health := time.NewTicker(500 * time.Millisecond)
	defer health.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-health.C:
			if err := cl.alive(); err != nil {
				return err
			}
		case err := <-f.errs:
			return err
		case u := <-f.updates:
			if done, err := fn(u); done || err != nil {
				return err
			}
		}
	}
}

// stream sends every change of s to out until ctx ends. A watch that ends is
// resumed from the last version seen; when that version is too old to watch
// from, the objects are listed again and their current versions sent.
func (cl *cluster) stream(ctx context.Context, s source, out chan<- update) error {
	rv := s.rv
	for {
		opts := append(slices.Clone(s.opts), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		w, err := cl.client.Watch(ctx, s.list.DeepCopyObject().(client.ObjectList), opts...)
		if err != nil {
			return fmt.Errorf("watching %T: %w", s.list, err)
		}
		next, gone, err := pipe(ctx, w, rv, out)
		w.Stop()
		if err != nil {
			return fmt.Errorf("watching %T: %w", s.list, err)
		}
		if !gone {
			rv = next
			continue
		}
		list := s.list.DeepCopyObject().(client.ObjectList)
		if err := cl.client.List(ctx, list, s.opts...); err != nil {
			return fmt.Errorf("listing %T again: %w", s.list, err)
		}
		err = apimeta.EachListItem(list, func(o runtime.Object) error {
			return send(ctx, out, update{obj: o.(client.Object)})
		})
		if err != nil {
			return err
		}
		rv = list.GetResourceVersion()
	}
}

// pipe forwards one watch's events until it ends. It returns the
// resourceVersion to resume from, or gone when that is too old.
func pipe(ctx context.Context, w watch.Interface, rv string, out chan<- update) (string, bool, error) {
	for {
		select {
		case <-ctx.Done():
			return rv, false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, false, ctx.Err()
			}
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				obj := ev.Object.(client.Object)
				rv = obj.GetResourceVersion()
				if err := send(ctx, out, update{obj: obj, deleted: ev.Type == watch.Deleted}); err != nil {
					return rv, false, err
				}
			case watch.Error:
				if err := apierrors.FromObject(ev.Object); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
					return rv, false, err
				}
				return "", true, nil
			}
		}
	}
}

func send(ctx context.Context, out chan<- update, u update) error {
	select {
	case out <- u:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
