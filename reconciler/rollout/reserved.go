package rollout

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/reconciler/assess"
)

// reservations are what allowed, unfinished proposals still have to grow,
// by StatefulSet: the quota of a namespace is decided over all of its
// proposals in flight, not one StatefulSet at a time, so that two
// proposals that each fit but not together do not both start and stop
// half-way. A proposal's growth shrinks as its claims are patched (their
// requests then count in the quota's use instead); it is dropped once done,
// denied or forgotten. In this process only: after a restart the first
// reconcile of each StatefulSet reserves again.
type reservations struct {
	mu sync.Mutex
	by map[string]map[string]assess.Growth // namespace → name → growth
	// deciding serialises the assessments of one namespace (namespace →
	// *sync.Mutex): two proposals assessed side by side would each see
	// the other's growth missing and both start.
	deciding sync.Map
}

// decide runs fn, which assesses a proposal of namespace ns and reserves,
// with no other assessment of ns beside it.
func (r *reservations) decide(ns string, fn func()) {
	mu, _ := r.deciding.LoadOrStore(ns, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	fn()
}

// set records what a's proposal of key still has to grow, or drops it
// when a is denied or has nothing left to grow.
func (r *reservations) set(key types.NamespacedName, a assess.Assessment) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.Verdict.Denied() || len(a.Growth) == 0 {
		r.dropLocked(key)
		return
	}
	if r.by == nil {
		r.by = map[string]map[string]assess.Growth{}
	}
	ns := r.by[key.Namespace]
	if ns == nil {
		ns = map[string]assess.Growth{}
		r.by[key.Namespace] = ns
	}
	ns[key.Name] = a.Growth
}

// others sums the reservations of the other StatefulSets in key's namespace.
func (r *reservations) others(key types.NamespacedName) assess.Growth {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum := assess.Growth{}
	for name, g := range r.by[key.Namespace] {
		if name != key.Name {
			sum.Add(g)
		}
	}
	return sum
}

func (r *reservations) drop(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropLocked(key)
}

func (r *reservations) dropLocked(key types.NamespacedName) {
	delete(r.by[key.Namespace], key.Name)
	if len(r.by[key.Namespace]) == 0 {
		delete(r.by, key.Namespace)
	}
}
