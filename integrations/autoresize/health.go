package autoresize

import (
	"fmt"
	"net/http"
	"time"
)

// Healthz is a liveness check (healthz.Checker) that fails while the
// loop is wedged: StatefulSets wait to be checked, or checks run, and
// none has returned for 2 × CheckTimeout + Interval, longer than any
// check that honours its deadline takes. It passes where the loop does
// not run (a replica that is not the leader) and while there is nothing to
// check. A restart is what frees checks that ignore their deadline.
func (c *Controller) Healthz(*http.Request) error {
	s := c.sched.Load()
	if s == nil {
		return nil
	}
	return s.healthy(time.Now())
}

func (s *scheduler) healthy(now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	queued := s.queue.Len()
	if len(s.running) == 0 && queued == 0 {
		return nil
	}
	bound := 2*s.timeout + s.interval
	if since := now.Sub(s.progress); since > bound {
		return fmt.Errorf("autoresize: no check returned for %s (over %s): %d running, %d of them stuck past their deadline, %d queued",
			since.Round(time.Second), bound, len(s.running), len(s.stuck), queued)
	}
	return nil
}
