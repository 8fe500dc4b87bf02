package autoresize

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// A round reads each tool object once, however many of its StatefulSets
// ask (each gets a copy of its own), a missing one once too, and locates
// each once per resourceVersion; a read cut by its check's deadline is
// read again by the next check.
func TestToolMemoReadsEachObjectOncePerRound(t *testing.T) {
	gets := map[string]int{}
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).
		WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "shop"}, Data: map[string]string{"k": "v"}}).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets[key.Name]++
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	m := newToolMemo(c)
	ctx := context.Background()
	for range 3 {
		cm := &corev1.ConfigMap{}
		if err := m.Get(ctx, types.NamespacedName{Namespace: "flux-system", Name: "shop"}, cm); err != nil || cm.Data["k"] != "v" {
			t.Fatalf("read %+v, %v", cm, err)
		}
		cm.Data["k"] = "changed by its reader"
		if err := m.Get(ctx, types.NamespacedName{Namespace: "flux-system", Name: "gone"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a missing object: %v, want NotFound", err)
		}
	}
	if gets["shop"] != 1 || gets["gone"] != 1 {
		t.Errorf("reads %v, want each once", gets)
	}
	cut, cancel := context.WithCancel(ctx)
	cancel()
	_ = m.Get(cut, types.NamespacedName{Namespace: "flux-system", Name: "late"}, &corev1.ConfigMap{})
	_ = m.Get(ctx, types.NamespacedName{Namespace: "flux-system", Name: "late"}, &corev1.ConfigMap{})
	if gets["late"] != 2 {
		t.Errorf("a read cut by its deadline: read %d times, want again by the next check", gets["late"])
	}

	var tools source.Registry
	tools.Know(fixedTool{})
	ctl := &Controller{Tools: &tools}
	located := 0
	for _, rv := range []string{"1", "1", "2"} {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "shop", ResourceVersion: rv}}
		before := len(m.where)
		if _, err := m.locate(ctx, ctl, source.Applier{Source: v1alpha1.Source{Kind: "Fixed", Namespace: "flux-system", Name: "shop"}, Object: obj}); err != nil {
			t.Fatal(err)
		}
		located += len(m.where) - before
	}
	if located != 2 {
		t.Errorf("located %d times for resourceVersions 1, 1, 2; want 2", located)
	}
}

// Checks that ask for the same tool object at once (the workers check a
// namespace's StatefulSets side by side) share one read: the others wait
// for it.
func TestToolMemoSharesAReadInFlight(t *testing.T) {
	var gets atomic.Int32
	release := make(chan struct{})
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).
		WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "shop"}}).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets.Add(1)
			<-release
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	m := newToolMemo(c)
	var checks sync.WaitGroup
	var asking atomic.Int32
	errs := make(chan error, 4)
	for range 4 {
		checks.Go(func() {
			asking.Add(1)
			errs <- m.Get(context.Background(), types.NamespacedName{Namespace: "flux-system", Name: "shop"}, &corev1.ConfigMap{})
		})
	}
	// The first read is under way and every check asks; the others wait
	// for that read, not the reader.
	for gets.Load() == 0 || asking.Load() < 4 {
		runtime.Gosched()
	}
	close(release)
	checks.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("%d reads for 4 checks at once, want 1", n)
	}
}
