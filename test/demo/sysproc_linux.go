package main

import "syscall"

// sysProcAttr gives the controller its own process group, so a Ctrl-C in the
// terminal reaches only the demo (which then stops the controller before the
// API server), and a parent-death signal, so a killed demo leaves no controller.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
