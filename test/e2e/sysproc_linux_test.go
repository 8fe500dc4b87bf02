package e2e

import "syscall"

// sysProcAttr gives each controller its own process group (a ^C in the
// terminal reaches only the test binary, which then stops it) and a
// parent-death signal, so a test binary killed by `go test -timeout` does not
// leave a controller running against a deleted cluster.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
