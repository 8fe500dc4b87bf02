package autoresize

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/source"
)

// toolMemo reads each GitOps tool object, and locates it, once per round:
// the StatefulSets one Kustomization, HelmRelease or Application applies
// share it and where Git holds them, and reading it and its source (a
// GitRepository, a parent) for each of them in every round would cost the
// API server reads each. Checks that ask at once wait for the first one's
// read (the workers check a namespace's StatefulSets side by side). What a
// read or a location that failed because its check ran out of time is not
// kept.
type toolMemo struct {
	// reader reads what is not read yet in the round.
	reader  client.Reader
	mu      sync.Mutex
	objects map[objectKey]*lazy[objectRead]
	where   map[objectKey]*lazy[location]
}

// objectKey is an object's Go type (its kind, for an unstructured one),
// namespace and name, and, for a location, the resourceVersion it was
// located at.
type objectKey struct{ kind, namespace, name, resourceVersion string }

type objectRead struct {
	obj client.Object
	err error
}

type location struct {
	where Where
	err   error
}

func newToolMemo(r client.Reader) *toolMemo {
	return &toolMemo{reader: r, objects: map[objectKey]*lazy[objectRead]{}, where: map[objectKey]*lazy[location]{}}
}

func kindOf(obj client.Object) string {
	if u, ok := obj.(runtime.Unstructured); ok {
		return u.GetObjectKind().GroupVersionKind().String()
	}
	return fmt.Sprintf("%T", obj)
}

// entry is m's entry of k in entries, made on first use.
func entry[T any](m *toolMemo, entries map[objectKey]*lazy[T], k objectKey) *lazy[T] {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := entries[k]
	if e == nil {
		e = &lazy[T]{}
		entries[k] = e
	}
	return e
}

// Get implements client.Reader: the round's one read of key, copied into obj.
func (m *toolMemo) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	k := objectKey{kind: kindOf(obj), namespace: key.Namespace, name: key.Name}
	r, err := entry(m, m.objects, k).get(ctx, func() (objectRead, error) {
		read := obj.DeepCopyObject().(client.Object)
		err := m.reader.Get(ctx, key, read, opts...)
		if err != nil && ctx.Err() != nil {
			return objectRead{}, err
		}
		return objectRead{obj: read, err: err}, nil
	})
	switch {
	case err != nil:
		return err
	case r.err != nil:
		return r.err
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(r.obj.DeepCopyObject()).Elem())
	return nil
}

// List implements client.Reader; lists are not kept.
func (m *toolMemo) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return m.reader.List(ctx, list, opts...)
}

// locate is c.locate(ctx, src, m), once per tool object as read
// (src.Object) in the round; a proposal's source, not read yet, is
// located each time.
func (m *toolMemo) locate(ctx context.Context, c *Controller, src source.Applier) (Where, error) {
	if src.Object == nil {
		return c.locate(ctx, src, m)
	}
	key := objectKey{src.Source.Kind, src.Object.GetNamespace(), src.Object.GetName(), src.Object.GetResourceVersion()}
	l, err := entry(m, m.where, key).get(ctx, func() (location, error) {
		where, err := c.locate(ctx, src, m)
		if err != nil && ctx.Err() != nil {
			return location{}, err
		}
		return location{where, err}, nil
	})
	if err != nil {
		return Where{}, err
	}
	return l.where, l.err
}
