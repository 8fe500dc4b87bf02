package sandbox

import "syscall"

// sysProcAttr kills the child when the thread that started it ends with
// the controller, so no render outlives a crash.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
