package gitea

import "syscall"

// sysProcAttr: own process group, and SIGKILL when the test binary dies. The
// parent-death signal follows the OS thread that forked: do not Start from a
// goroutine locked with runtime.LockOSThread that later exits.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
