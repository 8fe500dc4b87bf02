package main

import "syscall"

// sysProcAttr gives the controller its own process group (a Ctrl-C in the
// terminal reaches only this program, which then stops it in order) and a
// parent-death signal, so it cannot outlive a killed scale run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
