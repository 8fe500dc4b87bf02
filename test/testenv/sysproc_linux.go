package testenv

import "syscall"

// sysProcAttr: own process group, and SIGKILL when the test binary dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
