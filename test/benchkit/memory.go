package benchkit

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// Memory is a process's resident memory as the kernel accounts it, in KiB.
type Memory struct {
	// RSSKiB is VmRSS now; HWMKiB is VmHWM, the peak RSS since it started.
	RSSKiB, HWMKiB int64
}

// ReadMemory reads the process pid's VmRSS and VmHWM from /proc (Linux only).
func ReadMemory(pid int) (Memory, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return Memory{}, err
	}
	return readMemory(fs, pid)
}

func readMemory(fs procfs.FS, pid int) (Memory, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return Memory{}, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return Memory{}, fmt.Errorf("status of process %d: %w", pid, err)
	}
	// A kernel thread has neither; a figure of 0 would pass for a measurement.
	if st.VmRSS == 0 || st.VmHWM == 0 {
		return Memory{}, fmt.Errorf("no VmRSS or VmHWM in the status of process %d", pid)
	}
	return Memory{RSSKiB: int64(st.VmRSS / 1024), HWMKiB: int64(st.VmHWM / 1024)}, nil
}
