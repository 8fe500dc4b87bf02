package rollout

import (
	"crypto/sha256"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// memory is what one reconcile of a StatefulSet leaves the next, in this
// process only: the patch the API server last rejected and the eviction last
// refused (so unrelated events do not repeat them before their back-off ends), whether "not managed" was
// logged, our last write of the rollout and the claims patched (so a lagging
// cache does not cause the same write twice). It is forgotten with the StatefulSet, so it is bounded by the
// StatefulSets that exist. What was reported lives in the
// VolumeClaimRollout and in the sinks, not here.
type memory struct {
	m sync.Map // types.NamespacedName → *remembered
}

type remembered struct {
	mu       sync.Mutex
	rejected *rejection
	// unmanagedLogged: "not managing this StatefulSet" was logged.
	unmanagedLogged bool
	// written is this process's last write of the rollout.
	written ownWrite
	// patchedFrom maps the claims this process patched to the
	// resourceVersion each was patched from, until the cache serves a newer.
	patchedFrom map[string]string
	// seenPods are the Pods of StatefulSet object seenPodsOf as
	// plan.OnDeleteOf saw them (updateStrategy OnDelete only).
	seenPodsOf types.UID
	seenPods   map[string]plan.SeenPod

	// evictionHeld is the last refused eviction, not asked again before
	// its back-off ends however many events come meanwhile.
	evictionHeld *heldEviction
}

// heldEviction is an eviction refused (a PodDisruptionBudget, an error)
// and the message that says so.
type heldEviction struct {
	uid       string
	message   string
	notBefore time.Time
}

// ownWrite is this process's last write of a rollout as the API server
// answered it: its resourceVersion, its owner references and its status
// (statusSum).
type ownWrite struct {
	version string
	owners  []metav1.OwnerReference
	sum     [sha256.Size]byte
}

// rejection is a patch the API server refused, and what must change to try at once.
type rejection struct {
	claim, pvcVersion string
	generation        int64
	message           string
	notBefore         time.Time
}

// read calls fn with key's record locked, if there is one; a read never
// makes a record.
func (m *memory) read(key types.NamespacedName, fn func(*remembered)) {
	if v, ok := m.m.Load(key); ok {
		r := v.(*remembered)
		r.mu.Lock()
		defer r.mu.Unlock()
		fn(r)
	}
}

// write calls fn with key's record, made if missing, locked.
func (m *memory) write(key types.NamespacedName, fn func(*remembered)) {
	v, _ := m.m.LoadOrStore(key, &remembered{})
	r := v.(*remembered)
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(r)
}

// rejection returns the remembered rejection of key, if any.
func (m *memory) rejection(key types.NamespacedName) (rej *rejection) {
	m.read(key, func(r *remembered) { rej = r.rejected })
	return rej
}

// setRejection remembers rej (nil forgets it) for key.
func (m *memory) setRejection(key types.NamespacedName, rej *rejection) {
	if rej == nil {
		m.read(key, func(r *remembered) { r.rejected = nil })
		return
	}
	m.write(key, func(r *remembered) { r.rejected = rej })
}

// heldEviction returns the refused eviction of key, if any.
func (m *memory) heldEviction(key types.NamespacedName) (h *heldEviction) {
	m.read(key, func(r *remembered) { h = r.evictionHeld })
	return h
}

// holdEviction remembers a refused eviction (nil forgets it) for key.
func (m *memory) holdEviction(key types.NamespacedName, h *heldEviction) {
	if h == nil {
		m.read(key, func(r *remembered) { r.evictionHeld = nil })
		return
	}
	m.write(key, func(r *remembered) { r.evictionHeld = h })
}

// firstUnmanaged reports whether key was not already logged as unmanaged,
// and marks it logged.
func (m *memory) firstUnmanaged(key types.NamespacedName) (first bool) {
	m.write(key, func(r *remembered) { first, r.unmanagedLogged = !r.unmanagedLogged, true })
	return first
}

// managed forgets that key was logged as unmanaged.
func (m *memory) managed(key types.NamespacedName) {
	m.read(key, func(r *remembered) { r.unmanagedLogged = false })
}

// wroteRollout remembers w, this process's latest write of key's rollout.
func (m *memory) wroteRollout(key types.NamespacedName, w ownWrite) {
	w.owners = slices.Clone(w.owners)
	m.write(key, func(r *remembered) { r.written = w })
}

// ownWriteAhead returns this process's last write of key's rollout when the
// cache's copy, of resourceVersion cached, is older than it. Not ahead when
// the versions do not compare: then the write is made again.
func (m *memory) ownWriteAhead(key types.NamespacedName, cached string) (w ownWrite, ahead bool) {
	m.read(key, func(r *remembered) { w = r.written })
	if w.version == "" {
		return ownWrite{}, false
	}
	cmp, err := resourceversion.CompareResourceVersion(cached, w.version)
	return w, err == nil && cmp < 0
}

// seenPods returns the Pods of StatefulSet object uid as last seen.
func (m *memory) seenPods(key types.NamespacedName, uid types.UID) (pods map[string]plan.SeenPod) {
	m.read(key, func(r *remembered) {
		if r.seenPodsOf == uid {
			pods = r.seenPods
		}
	})
	return pods
}

// setSeenPods remembers the Pods of StatefulSet object uid as seen.
func (m *memory) setSeenPods(key types.NamespacedName, uid types.UID, pods map[string]plan.SeenPod) {
	if len(pods) == 0 && m.seenPods(key, uid) == nil {
		return
	}
	m.write(key, func(r *remembered) { r.seenPodsOf, r.seenPods = uid, pods })
}

// forget drops everything about key (the StatefulSet is gone).
func (m *memory) forget(key types.NamespacedName) {
	m.m.Delete(key)
}

// patchedClaim remembers that claim was patched from resourceVersion from.
func (m *memory) patchedClaim(key types.NamespacedName, claim, from string) {
	m.write(key, func(r *remembered) {
		if r.patchedFrom == nil {
			r.patchedFrom = map[string]string{}
		}
		r.patchedFrom[claim] = from
	})
}

// cacheBehind reports whether claims, as the cache serves them, still holds
// a claim this process patched at the version it patched it from: the cache
// has not seen that patch yet. Claims it has caught up with (or that are
// gone) are forgotten, so the map holds at most the claims in flight.
func (m *memory) cacheBehind(key types.NamespacedName, claims map[string]*corev1.PersistentVolumeClaim) (behind bool) {
	m.read(key, func(r *remembered) {
		for name, from := range r.patchedFrom {
			if pvc := claims[name]; pvc != nil && pvc.ResourceVersion == from {
				behind = true
				continue
			}
			delete(r.patchedFrom, name)
		}
	})
	return behind
}
