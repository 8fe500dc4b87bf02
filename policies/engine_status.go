package policies

import (
	"fmt"
	"strings"
	"time"
)

// Status is the state of the policy set, for a condition on the controller.
type Status struct {
	// Ready is true when the policies compiled and every bundle has been
	// loaded at least once; otherwise every verdict is a denial.
	Ready bool
	// Stale is true when a bundle's last download failed and its last good
	// version is in use.
	Stale bool
	// Message says what is wrong (or, when all is well, what is loaded),
	// e.g. "bundle org: last fetch failed at 2025-06-01T10:05:00Z: ...;
	// using revision 42 from 2025-06-01T10:02:00Z".
	Message string
	// CompileError is the compile error with file:line, or "".
	CompileError string
	// Revision is the current policy revision (as in verdicts).
	Revision string
	// Modules names every loaded module.
	Modules []string
}

// Status reports the current policy set and the health of its sources.
func (e *Engine) Status() Status {
	c := e.cur.Load()
	s := Status{
		Ready:        c.failure == "",
		CompileError: c.compileError,
		Revision:     c.revision,
		Modules:      c.modules,
	}
	var notes []string
	if c.failure != "" {
		notes = append(notes, "every claim change is denied: "+c.failure)
	}
	e.mu.Lock()
	for _, b := range e.bundles {
		switch {
		case !b.loaded && b.lastErr != nil:
			notes = append(notes, fmt.Sprintf("bundle %s: not loaded yet; last fetch failed at %s: %v",
				b.cfg.Name, stamp(b.lastErrAt), b.lastErr))
		case !b.loaded:
			notes = append(notes, fmt.Sprintf("bundle %s: not loaded yet", b.cfg.Name))
		case b.lastErr != nil:
			s.Stale = true
			notes = append(notes, fmt.Sprintf("bundle %s: last fetch failed at %s: %v; using revision %q from %s",
				b.cfg.Name, stamp(b.lastErrAt), b.lastErr, b.revision, stamp(b.loadedAt)))
		}
	}
	e.mu.Unlock()
	if len(notes) == 0 {
		notes = append(notes, fmt.Sprintf("policy revision %s: %d modules", c.revision, len(c.modules)))
	}
	s.Message = strings.Join(notes, "; ")
	return s
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
