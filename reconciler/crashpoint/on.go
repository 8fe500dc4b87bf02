//go:build chaos

package crashpoint

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Env names the step to crash at ("<step>" or "<step>:<n>").
const Env = "CHAOS_CRASH_AT"

var (
	mu     sync.Mutex
	counts = map[Step]int{}
)

func reached(step Step) {
	spec := os.Getenv(Env)
	if spec == "" {
		return
	}
	name, nth, _ := strings.Cut(spec, ":")
	n, err := strconv.Atoi(nth)
	if nth == "" || err != nil || n < 1 {
		n = 1
	}
	if Step(name) != step {
		return
	}
	mu.Lock()
	counts[step]++
	hit := counts[step] == n
	mu.Unlock()
	if hit {
		// Said on stderr so the run's log shows where the process died.
		fmt.Fprintf(os.Stderr, "crashpoint: SIGKILL at %s (%d)\n", step, n)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}
