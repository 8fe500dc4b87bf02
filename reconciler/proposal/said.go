package proposal

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Said remembers, per GitOps object and event reason, the last message a
// source announced, so that what does not change (suspended, nothing to do)
// is said once, not on every reconcile. The zero value is ready to use.
type Said struct {
	m sync.Map // saidKey → message
}

type saidKey struct {
	obj    types.NamespacedName
	reason string
}

// Once records msg for obj and reason and reports whether it is new.
func (s *Said) Once(obj types.NamespacedName, reason, msg string) bool {
	last, ok := s.m.Swap(saidKey{obj, reason}, msg)
	return !ok || last != msg
}

// Forget drops what was said about obj (deleted).
func (s *Said) Forget(obj types.NamespacedName) {
	s.m.Range(func(k, _ any) bool {
		if k.(saidKey).obj == obj {
			s.m.Delete(k)
		}
		return true
	})
}
