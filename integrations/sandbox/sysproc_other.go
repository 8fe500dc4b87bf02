//go:build !linux

package sandbox

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
