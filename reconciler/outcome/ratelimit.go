package outcome

import (
	"reflect"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// The events recorded about one object: a burst of EventBurst, then one
// per EventRefill. These are client-go's limits for core/v1 events
// (tools/record's spam filter, which works on core/v1 Events only); the
// events.k8s.io recorder that controller-runtime hands out has none, so
// without them a tenant who flips a StatefulSet's templates back and forth
// would have us write an event to etcd for every flip.
const (
	EventBurst  = 25
	EventRefill = 5 * time.Minute
)

var eventsDropped = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "claimwarden_events_dropped_total",
	Help: "Kubernetes events not recorded because their object had used its allowance (a burst of 25, then one per 5 minutes).",
})

func init() {
	metrics.Registry.MustRegister(eventsDropped)
}

// NewRecorder returns a Recorder that records through r at most EventBurst
// events about one object (and related object), then one per EventRefill,
// remembering the allowance of at most DefaultEventMemory of them.
func NewRecorder(r events.EventRecorder) Recorder {
	return Recorder{EventRecorder: r, limiter: newObjectLimiter(DefaultEventMemory, time.Now)}
}

// Or is r, or when r records nothing (the zero Recorder) a NewRecorder of
// m's recorder for claimwarden (m is a manager): the one defaults
// convention of the options that take the controller's one Recorder, so
// that a test may leave it out.
func (r Recorder) Or(m recorder.Provider) Recorder {
	if r.EventRecorder != nil {
		return r
	}
	return NewRecorder(m.GetEventRecorder(v1alpha1.ControllerName))
}

// objectLimiter holds a token bucket per object, the least recently used
// forgotten beyond its size (which at worst lets a forgotten object burst
// again).
type objectLimiter struct {
	mu      sync.Mutex
	buckets *lru.Cache[objectKey, *rate.Limiter]
	now     func() time.Time
}

type objectKey struct{ kind, namespace, name, related string }

func newObjectLimiter(size int, now func() time.Time) *objectLimiter {
	buckets, err := lru.New[objectKey, *rate.Limiter](size)
	if err != nil {
		panic(err) // only for a size < 1
	}
	return &objectLimiter{buckets: buckets, now: now}
}

// allow takes one event from the allowance of the pair regarding and
// related (nil or not): the claim each ClaimPatched event is related to
// makes a large StatefulSet's claims count one by one, as in kubectl's
// view of them.
func (l *objectLimiter) allow(regarding, related runtime.Object) bool {
	key, ok := keyOf(regarding)
	if !ok {
		return true
	}
	if related != nil {
		if rel, ok := keyOf(related); ok {
			key.related = rel.kind + "/" + rel.namespace + "/" + rel.name
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets.Get(key)
	if !ok {
		b = rate.NewLimiter(rate.Every(EventRefill), EventBurst)
		l.buckets.Add(key, b)
	}
	if b.AllowN(l.now(), 1) {
		return true
	}
	eventsDropped.Inc()
	return false
}

// keyOf names obj by kind, namespace and name, so that an event about a
// reference and one about the typed object share an allowance.
func keyOf(obj runtime.Object) (objectKey, bool) {
	if ref, ok := obj.(*corev1.ObjectReference); ok {
		return objectKey{kind: ref.Kind, namespace: ref.Namespace, name: ref.Name}, true
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return objectKey{}, false
	}
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = reflect.Indirect(reflect.ValueOf(obj)).Type().Name()
	}
	return objectKey{kind: kind, namespace: m.GetNamespace(), name: m.GetName()}, true
}
