package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
)

// confine bounds this process: memory (RLIMIT_DATA: private writable
// mappings, i.e. the heap, above what it holds now), address space
// (RLIMIT_AS, loosely: Go reserves about a GiB it never touches), CPU time
// (RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL a second later), and
// makes it the first process the kernel kills when the container's memory
// runs out, before the controller.
func confine(memory int64, cpu time.Duration) error {
	data, err := statusBytes("VmData")
	if err != nil {
		return err
	}
	size, err := statusBytes("VmSize")
	if err != nil {
		return err
	}
	secs := uint64(max(cpu/time.Second, 1))
	for _, l := range []struct {
		name     string
		resource int
		cur, max uint64
	}{
		{"RLIMIT_DATA", syscall.RLIMIT_DATA, uint64(data + memory), uint64(data + memory)},
		{"RLIMIT_AS", syscall.RLIMIT_AS, uint64(size + memory + addressSpaceSlack), uint64(size + memory + addressSpaceSlack)},
		{"RLIMIT_CPU", syscall.RLIMIT_CPU, secs, secs + 1},
	} {
		if err := syscall.Setrlimit(l.resource, &syscall.Rlimit{Cur: l.cur, Max: l.max}); err != nil {
			return fmt.Errorf("setting %s: %w", l.name, err)
		}
	}
	// Raising one's own OOM score needs no privilege; where /proc is not
	// writable the limits above still hold.
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	// The garbage collector works harder as the heap nears the bound,
	// rather than the first allocation past it ending the process.
	debug.SetMemoryLimit(memory)
	return nil
}

// statusBytes is a size field of /proc/self/status (VmData, VmSize), in bytes.
func statusBytes(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("reading /proc/self/status: %w", err)
	}
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		name, rest, ok := bytes.Cut(s.Bytes(), []byte(":"))
		if !ok || string(name) != field {
			continue
		}
		kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/self/status %s: %w", field, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/self/status has no %s", field)
}
