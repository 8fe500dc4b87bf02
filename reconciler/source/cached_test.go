package source

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// countingReader counts the reads it answers.
type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// configMapTool is a watched tool whose objects are ConfigMaps.
type configMapTool struct{ Tool }

func (configMapTool) NewObject() client.Object { return &corev1.ConfigMap{} }

// The watched tools' objects are read from the cache, and from the API
// server only when the cache has none (a namespace it does not watch, an
// object it has not seen yet); other kinds (a tool's sources) always from
// the API server, never starting an informer.
func TestWatchedReader(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = "flux-system", "shop"
	fresh := cm.DeepCopy()
	fresh.Name = "fresh"
	secret := &corev1.Secret{}
	secret.Namespace, secret.Name = "flux-system", "shop"
	cached := &countingReader{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(cm).Build()}
	api := &countingReader{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(cm, fresh, secret).Build()}
	var r Registry
	r.Watch(Registration{Tool: configMapTool{}})
	reader := r.WatchedReader(cached, api, scheme)
	ctx := context.Background()
	for _, c := range []struct {
		name            string
		key             client.ObjectKey
		obj             client.Object
		cached, fromAPI int
	}{
		{"a watched kind the cache holds", client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}, 1, 0},
		{"a watched kind the cache has not seen", client.ObjectKeyFromObject(fresh), &corev1.ConfigMap{}, 1, 1},
		{"another kind", client.ObjectKeyFromObject(secret), &corev1.Secret{}, 0, 1},
	} {
		cached.gets, api.gets = 0, 0
		if err := reader.Get(ctx, c.key, c.obj); err != nil || c.obj.GetName() != c.key.Name {
			t.Errorf("%s: %v", c.name, err)
		}
		if cached.gets != c.cached || api.gets != c.fromAPI {
			t.Errorf("%s: %d reads from the cache, %d from the API server; want %d, %d", c.name, cached.gets, api.gets, c.cached, c.fromAPI)
		}
	}
}
