//go:build unix && !linux

package main

import "syscall"

// sysProcAttr: only Linux has a parent-death signal; elsewhere a killed scale
// run can leave the controller behind (and /proc memory figures are missing).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
