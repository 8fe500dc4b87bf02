//go:build unix

package benchkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv makes the test binary play the interrupted run.
const childEnv = "BENCHKIT_INTERRUPT_CHILD"

// TestInterruptContext: the first SIGTERM ends the context and the process
// lives on; a second one kills it.
func TestInterruptContext(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		interruptedRun()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptContext$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.Output()
	if !strings.Contains(string(out), "first signal caught") {
		t.Fatalf("the first SIGTERM did not end the context with the process alive: %v, output %q", err, out)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the run outlived a second SIGTERM: %v, output %q", err, out)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("the run ended with %v, want killed by SIGTERM", exit)
	}
}

// interruptedRun sends itself SIGTERM, then sends it again until it dies:
// the default action comes back only just after the context ends. It gives
// up (and exits 0, failing the test) after 10 s.
func interruptedRun() {
	ctx, stop := InterruptContext()
	defer stop()
	_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	<-ctx.Done()
	fmt.Println("first signal caught")
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	giveUp := time.After(10 * time.Second)
	for {
		select {
		case <-tick.C:
			_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		case <-giveUp:
			return
		}
	}
}
