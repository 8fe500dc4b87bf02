package proposal

import (
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apimachinery/pkg/types"
)

// maxSaid bounds what Said remembers: forgetting the oldest costs at most
// one repeated event.
const maxSaid = 4096

// Said remembers, per object and event reason, the last message announced,
// so that what does not change is said once, not on every reconcile. It
// remembers the maxSaid most recent; the zero value is ready to use.
type Said struct {
	once sync.Once
	m    *lru.Cache[saidKey, string]
}

type saidKey struct {
	obj    types.NamespacedName
	reason string
}

func (s *Said) cache() *lru.Cache[saidKey, string] {
	s.once.Do(func() {
		s.m, _ = lru.New[saidKey, string](maxSaid) // fails only for a size below 1
	})
	return s.m
}

// Once records msg for obj and reason and reports whether it is new.
func (s *Said) Once(obj types.NamespacedName, reason, msg string) bool {
	k := saidKey{obj, reason}
	if last, ok := s.cache().Get(k); ok && last == msg {
		return false
	}
	s.cache().Add(k, msg)
	return true
}

// Forget drops what was said about obj (deleted).
func (s *Said) Forget(obj types.NamespacedName) {
	for _, k := range s.cache().Keys() {
		if k.obj == obj {
			s.cache().Remove(k)
		}
	}
}
