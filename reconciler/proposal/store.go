package proposal

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// Store holds the newest proposal per StatefulSet, in memory: after a
// restart the sources propose again, and a rollout already converged finds
// its source in its VolumeClaimRollout. It is safe for concurrent use.
type Store struct {
	mu     sync.Mutex
	byKey  map[types.NamespacedName]Proposal
	events chan event.GenericEvent
	// rounds numbers the reads of tool objects (NextRound).
	rounds atomic.Uint64
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{
		byKey: map[types.NamespacedName]Proposal{},
		// Buffered so that a source does not wait for the rollout
		// controller's queue; Set blocks only when this many are unread.
		events: make(chan event.GenericEvent, 1024),
	}
}

// Events carries one event per StatefulSet whose proposal changed; the
// rollout controller watches it (source.Channel).
func (s *Store) Events() <-chan event.GenericEvent { return s.events }

// Get returns the proposal for a StatefulSet.
func (s *Store) Get(key types.NamespacedName) (Proposal, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.byKey[key]
	return p, ok
}

// Set stores p, replacing any proposal for the same StatefulSet, and
// notifies the rollout controller. The source's repository is stored
// without user information (RepositoryURL), whichever source forgot it.
func (s *Store) Set(ctx context.Context, p Proposal) { s.SetAll(ctx, []Proposal{p}) }

// SetAll stores ps as Set does, all at once: whoever reads the store sees
// all of them or none (the StatefulSets of one round, Proposal.Round).
func (s *Store) SetAll(ctx context.Context, ps []Proposal) {
	keys := make([]types.NamespacedName, len(ps))
	s.mu.Lock()
	for i, p := range ps {
		p.Source.Repository = RepositoryURL(p.Source.Repository)
		keys[i] = p.Key()
		s.byKey[keys[i]] = p
	}
	s.mu.Unlock()
	for _, key := range keys {
		s.notify(ctx, key)
	}
}

// Delete forgets the proposal for key if owner made it (a StatefulSet gone
// from the source; another source's proposal is not the owner's to drop).
func (s *Store) Delete(ctx context.Context, owner Owner, key types.NamespacedName) {
	s.mu.Lock()
	p, ok := s.byKey[key]
	if ok && OwnerOf(p.Source) == owner {
		delete(s.byKey, key)
	}
	s.mu.Unlock()
	if ok {
		s.notify(ctx, key)
	}
}

// NextRound numbers a read of a tool object that proposes (Proposal.Round):
// a number no earlier read was given, and greater than theirs.
func (s *Store) NextRound() uint64 { return s.rounds.Add(1) }

// Of returns owner's proposals, sorted by StatefulSet.
func (s *Store) Of(owner Owner) []Proposal {
	keys := s.Owned(owner)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Proposal, 0, len(keys))
	for _, k := range keys {
		if p, ok := s.byKey[k]; ok && OwnerOf(p.Source) == owner {
			out = append(out, p)
		}
	}
	return out
}

// Owned lists, sorted, the StatefulSets owner has proposals for.
func (s *Store) Owned(owner Owner) []types.NamespacedName {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []types.NamespacedName
	for k, p := range s.byKey {
		if OwnerOf(p.Source) == owner {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// SetSourceError marks owner's proposals with msg ("" clears it): the source
// cannot be read now, and the rollouts say so.
func (s *Store) SetSourceError(ctx context.Context, owner Owner, msg string) {
	var changed []types.NamespacedName
	s.mu.Lock()
	for k, p := range s.byKey {
		if OwnerOf(p.Source) == owner && p.SourceError != msg {
			p.SourceError = msg
			s.byKey[k] = p
			changed = append(changed, k)
		}
	}
	s.mu.Unlock()
	for _, k := range changed {
		s.notify(ctx, k)
	}
}

func (s *Store) notify(ctx context.Context, key types.NamespacedName) {
	obj := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	select {
	case s.events <- event.GenericEvent{Object: obj}:
	case <-ctx.Done():
	}
}
