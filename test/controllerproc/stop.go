package controllerproc

import (
	"fmt"
	"time"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// Shutdown sends SIGTERM, as Kubernetes does to end a Pod, and holds the
// controller to what it promises then: a clean exit (status 0) within grace. If it
// is still running then it is SIGKILLed. A process that had exited before is a
// crash. Each of these is returned as an error.
//
// Stop (testenv.Process) is the cleanup that does not judge the exit.
func (p *Process) Shutdown(grace time.Duration) error {
	select {
	case <-p.Done():
		return fmt.Errorf("crashed before SIGTERM: %w", p.Exited())
	default:
	}
	if p.Terminate(grace) {
		return fmt.Errorf("%s did not stop within %s of SIGTERM; killed", p.Name(), grace)
	}
	if err := p.Err(); err != nil {
		return fmt.Errorf("%s exited with %v on SIGTERM, want 0; log %s:\n%s", p.Name(), err, p.LogPath(), testenv.TailFile(p.LogPath(), 20))
	}
	return nil
}
