//go:build unix

package policies

import (
	"syscall"
	"time"
)

// engCPUTime is the CPU time this process has used (user + system). On a
// shared machine it measures what the verdicts cost without the time other
// processes took the core away, which wall time counts.
func engCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
