package policies

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// errorSink records the messages logged at error level; Info is discarded.
type errorSink struct {
	mu     *sync.Mutex
	errors *[]string
}

func newErrorSink() errorSink { return errorSink{mu: &sync.Mutex{}, errors: &[]string{}} }

func (s errorSink) Init(logr.RuntimeInfo)                 {}
func (s errorSink) Enabled(int) bool                      { return true }
func (s errorSink) Info(int, string, ...any)              {}
func (s errorSink) WithValues(...any) logr.LogSink        { return s }
func (s errorSink) WithName(string) logr.LogSink          { return s }
func (s errorSink) Error(err error, msg string, _ ...any) { s.add(msg, err) }

func (s errorSink) add(msg string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		msg += ": " + err.Error()
	}
	*s.errors = append(*s.errors, msg)
}

func (s errorSink) logged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), *s.errors...)
}

// lateCache starts its cache only once the initial sync waits for it, or
// after its first List, as a manager may start the cache's runnable after
// the initial sync's.
type lateCache struct {
	cache.Cache
	once  sync.Once
	start func()
}

func (l *lateCache) WaitForCacheSync(ctx context.Context) bool {
	l.once.Do(l.start)
	return l.Cache.WaitForCacheSync(ctx)
}

func (l *lateCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	defer l.once.Do(l.start)
	return l.Cache.List(ctx, list, opts...)
}

// Loading is no error: while the policy ConfigMaps are not read yet the
// engine fails closed without logging an error, and an initial sync that
// runs before its cache has started waits for it instead of failing with
// "cache is not started". The ConfigMaps are then loaded.
func TestConfigMapStartLogsNoError(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "policies"
	c, err := client.New(env.Config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guardrails", Labels: map[string]string{PolicyLabel: "true"}},
			Data: map[string]string{"guardrails.rego": "package claimwarden.claims\n\ndeny contains \"never\" if input.never\n"}},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	real, err := cache.New(env.Config, cache.Options{
		Scheme:               clientgoscheme.Scheme,
		DefaultNamespaces:    map[string]cache.Config{ns: {}},
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{PolicyLabel: "true"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan error, 1)
	late := &lateCache{Cache: real, start: func() { go func() { started <- real.Start(ctx) }() }}

	sink := newErrorSink()
	e := engNew(t, Options{PollInterval: -1, Logger: logr.New(sink)})
	e.awaitConfigMaps(ns)
	if st := e.Status(); st.Ready {
		t.Fatalf("status before the ConfigMaps are read = %+v, want failing closed", st)
	}
	if err := (&configMapInitialSync{e: e, cache: late, namespace: ns}).Start(ctx); err != nil {
		t.Fatal(err)
	}

	e.mu.Lock()
	_, pending := e.configMaps[pendingConfigMaps]
	_, loaded := e.configMaps[ns+"/guardrails"]
	e.mu.Unlock()
	if pending || !loaded {
		t.Errorf("after the initial sync: pending %v, guardrails loaded %v; want the ConfigMap read", pending, loaded)
	}
	if got := sink.logged(); len(got) > 0 {
		t.Errorf("logged at error level during a clean start: %q", got)
	}
	cancel()
	if err := <-started; err != nil {
		t.Errorf("cache: %v", err)
	}
}
