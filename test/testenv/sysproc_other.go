//go:build unix && !linux

package testenv

import "syscall"

// sysProcAttr: own process group. Only Linux has a parent-death signal; elsewhere a
// killed test binary or tool can leave its children behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
