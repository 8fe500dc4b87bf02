package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one running component. Its stdout and stderr go to <dir>/<name>.log.
type process struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped; err is set then
	err  error

	mu       sync.Mutex
	stopping bool // set by stop, so an exit afterwards is not reported as a crash
}

// startProcess runs bin with args. The child gets its own process group (so stop can
// signal it with anything it spawned, and a ^C in the terminal reaches only the test
// binary) and, on Linux, a parent-death signal, so killing the test binary kills the
// control plane too. The parent-death signal follows the OS thread that forked: do
// not start an Env from a goroutine locked with runtime.LockOSThread that later exits.
func startProcess(dir, name, bin string, args []string, extraEnv ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	// The child writes to its own copy of the descriptor; ours is not needed after Start.
	defer f.Close()
	fmt.Fprintf(f, "# %s %s\n", bin, strings.Join(args, " "))

	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(childEnv(), extraEnv...)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// childEnv drops KUBECONFIG: every component gets an explicit --kubeconfig, and one
// inherited from the developer's shell must never point a test at a real cluster.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") {
			env = append(env, kv)
		}
	}
	return env
}

// exited returns a non-nil error once the process has ended; readiness polls use it
// to fail at once, pointing at the log, instead of waiting for their deadline.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v); log %s:\n%s", p.name, p.err, p.log, tailFile(p.log, 20))
	default:
		return nil
	}
}

// stop sends SIGTERM to the process group, and SIGKILL if it is still there after
// grace. It reports a process that had died on its own before stop was called,
// since a component crashing during a test is worth knowing about.
func (p *process) stop(grace time.Duration) error {
	p.mu.Lock()
	already := p.stopping
	p.stopping = true
	p.mu.Unlock()
	if already {
		<-p.done
		return nil
	}
	if err := p.exited(); err != nil {
		return fmt.Errorf("crashed before Stop: %w", err)
	}
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.done
	}
	// Anything the component spawned into its group goes too (none is expected).
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	return nil
}

// freePorts returns n distinct free loopback ports. All listeners stay open until
// every port is chosen, so the n are distinct; a port can still be taken by someone
// else before the component binds it, which then fails fast through exited().
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tailFile returns the last n lines of a log, for error messages.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
