//go:build unix && !linux

package main

import "syscall"

// sysProcAttr: own process group. Only Linux has a parent-death signal, so
// elsewhere a killed demo can leave the controller behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
