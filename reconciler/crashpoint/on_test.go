//go:build chaos

package crashpoint

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
)

// The chaos build SIGKILLs itself the n-th time it reaches the step named,
// and not at another step.
func TestChaosBuildKillsAtTheNthReach(t *testing.T) {
	for _, c := range []struct {
		spec   string
		passed int
		killed bool
	}{
		{string(ClaimPatched), 0, true},
		{string(ClaimPatched) + ":2", 1, true},
		{string(JournalWritten), 3, false},
	} {
		passed, err := runChild(t, c.spec)
		if passed != c.passed || signalled(err) != c.killed {
			t.Errorf("CHAOS_CRASH_AT=%s: got past the step %d times, ended with %v; want %d times, SIGKILLed %v", c.spec, passed, err, c.passed, c.killed)
		}
	}
}

func signalled(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
