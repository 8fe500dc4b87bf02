package testenv

import (
	"fmt"
	"syscall"
	"time"
)

// Stop ends the process as cleanup: Terminate with grace. It returns an error if
// the process had ended on its own before (a component or the controller crashing
// during a test is worth knowing about), unless Exited has already reported that
// exit: a caller whose wait failed on it need not read it twice. Stop is idempotent
// and safe to call concurrently.
func (p *Process) Stop(grace time.Duration) error {
	p.mu.Lock()
	already, reported := p.stopping, p.reported
	p.stopping = true
	p.mu.Unlock()
	if already {
		<-p.done
		return nil
	}
	select {
	case <-p.done:
		if reported {
			return nil
		}
		return fmt.Errorf("crashed before Stop: %w", p.Exited())
	default:
	}
	p.Terminate(grace)
	return nil
}

// Terminate sends SIGTERM to the process group, waits up to grace for the process
// to exit, and SIGKILLs the group if it has not. It reports whether SIGKILL was
// needed. After the exit the group gets a SIGKILL for anything the process spawned
// and left behind (none is expected). A process that had already exited gets no
// signal at all.
func (p *Process) Terminate(grace time.Duration) (killed bool) {
	p.markStopping()
	select {
	case <-p.done:
		return false
	default:
	}
	_ = p.signalGroup(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		killed = true
		_ = p.signalGroup(syscall.SIGKILL)
		<-p.done
	}
	_ = p.signalGroup(syscall.SIGKILL)
	return killed
}

// Kill SIGKILLs the process group, as an OOM kill or a lost node ends a Pod (no
// deferred work runs), and waits for the exit.
func (p *Process) Kill() error {
	p.markStopping()
	if err := p.signalGroup(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %s: %w", p.name, err)
	}
	<-p.done
	return nil
}

func (p *Process) markStopping() {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
}

// signalGroup signals the process's group: StartProcess made the process its
// leader, so the group ID is the process ID.
func (p *Process) signalGroup(sig syscall.Signal) error {
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}
