package testenv

import "syscall"

// sysProcAttr: own process group, and SIGKILL when this program dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
