//go:build unix && !linux

package e2e

import "syscall"

// sysProcAttr: own process group; there is no parent-death signal outside Linux.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
