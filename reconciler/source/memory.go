package source

import (
	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apimachinery/pkg/types"
)

// memory is what the Reconciler remembers per tool object, for at most a
// bounded number of objects: forgetting one costs a read of its desired
// StatefulSets and perhaps a note said twice. Each object is reconciled by
// one worker at a time, so its entry is never written concurrently.
type memory struct {
	objects *lru.Cache[types.NamespacedName, *objectMemory]
}

type objectMemory struct {
	// revisionKey is the Reading.Key last turned into proposals.
	revisionKey string
	// notesSaid holds, per event reason, the last note said.
	notesSaid map[string]string
}

func newMemory(size int) (*memory, error) {
	c, err := lru.New[types.NamespacedName, *objectMemory](size)
	if err != nil {
		return nil, err
	}
	return &memory{objects: c}, nil
}

func (m *memory) of(obj types.NamespacedName) *objectMemory {
	if om, ok := m.objects.Get(obj); ok {
		return om
	}
	om := &objectMemory{notesSaid: map[string]string{}}
	m.objects.Add(obj, om)
	return om
}

// alreadyProposed reports whether key was last turned into proposals for obj.
func (m *memory) alreadyProposed(obj types.NamespacedName, key string) bool {
	om, ok := m.objects.Get(obj)
	return ok && om.revisionKey == key
}

func (m *memory) markProposed(obj types.NamespacedName, key string) { m.of(obj).revisionKey = key }

// sayOnce records n and reports whether it is new.
func (m *memory) sayOnce(obj types.NamespacedName, n Note) bool {
	om := m.of(obj)
	if last, ok := om.notesSaid[n.Reason]; ok && last == n.Message {
		return false
	}
	om.notesSaid[n.Reason] = n.Message
	return true
}

// notes records the notes of a reading of obj and returns those that are
// new. A note the reading no longer carries is forgotten, so that it is
// said again when it comes back (a second suspension, force switched on
// again); the nothing-to-do message comes from reading the desired state,
// not from a reading, and stays.
func (m *memory) notes(obj types.NamespacedName, notes []Note) []Note {
	om := m.of(obj)
	next := map[string]string{}
	if msg, ok := om.notesSaid[ReasonNothingToDo]; ok {
		next[ReasonNothingToDo] = msg
	}
	var fresh []Note
	for _, n := range notes {
		if last, ok := om.notesSaid[n.Reason]; !ok || last != n.Message {
			fresh = append(fresh, n)
		}
		next[n.Reason] = n.Message
	}
	om.notesSaid = next
	return fresh
}

// skip forgets all about obj but notes, and returns those of notes that are
// new: a skipped object's notes are said once, the rest starts over.
func (m *memory) skip(obj types.NamespacedName, notes []Note) []Note {
	old, _ := m.objects.Get(obj)
	next := &objectMemory{notesSaid: map[string]string{}}
	var fresh []Note
	for _, n := range notes {
		if last, ok := old.saidFor(n.Reason); !ok || last != n.Message {
			fresh = append(fresh, n)
		}
		next.notesSaid[n.Reason] = n.Message
	}
	m.objects.Add(obj, next)
	return fresh
}

func (om *objectMemory) saidFor(reason string) (string, bool) {
	if om == nil {
		return "", false
	}
	msg, ok := om.notesSaid[reason]
	return msg, ok
}

func (m *memory) forget(obj types.NamespacedName) { m.objects.Remove(obj) }

// idle forgets the revision key of obj: what it proposed may be dropped,
// so when the same key blocks again it is read again.
func (m *memory) idle(obj types.NamespacedName) {
	if om, ok := m.objects.Peek(obj); ok {
		om.revisionKey = ""
	}
}
