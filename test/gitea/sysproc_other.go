//go:build unix && !linux

package gitea

import "syscall"

// sysProcAttr: own process group. Only Linux has a parent-death signal; elsewhere a
// killed test binary can leave Gitea behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
