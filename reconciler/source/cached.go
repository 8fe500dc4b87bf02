package source

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// WatchedReader reads the objects of the watched tools' kinds from cached
// (the cache their watchers fill: no request), and everything else, or
// what cached has no answer for, from uncached. Only watched kinds go to
// the cache: a read of another kind would start an informer of its own,
// which a tenant could name (a source kind the controller may get, not
// watch) and wait on for ever. An object the cache does not hold (a
// namespace it does not watch, one it has not seen yet) is read from the
// API server, so a cache that lags answers no less than a GET.
func (r *Registry) WatchedReader(cached, uncached client.Reader, scheme *runtime.Scheme) client.Reader {
	kinds := map[schema.GroupVersionKind]bool{}
	if r != nil {
		for _, w := range r.watched {
			if gvk, err := apiutil.GVKForObject(w.Tool.NewObject(), scheme); err == nil {
				kinds[gvk] = true
			}
		}
	}
	return watchedReader{cached: cached, uncached: uncached, scheme: scheme, kinds: kinds}
}

type watchedReader struct {
	cached, uncached client.Reader
	scheme           *runtime.Scheme
	kinds            map[schema.GroupVersionKind]bool
}

func (w watchedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if gvk, err := apiutil.GVKForObject(obj, w.scheme); err == nil && w.kinds[gvk] {
		if err := w.cached.Get(ctx, key, obj, opts...); err == nil {
			return nil
		}
	}
	return w.uncached.Get(ctx, key, obj, opts...)
}

func (w watchedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return w.uncached.List(ctx, list, opts...)
}
