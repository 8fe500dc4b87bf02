package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Process is one program run by a test or a test tool: a control-plane component
// here, the claimwarden binary in test/controllerproc. Its stdout and stderr go to
// one log file. Stop, Terminate and Kill (stop.go) end it.
type Process struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped; err is set then
	err  error

	mu       sync.Mutex
	stopping bool // Stop, Terminate or Kill was called: the exit is wanted, not a crash
	reported bool // Exited has returned the exit, so Stop need not report it again
}

// ProcessOptions say what StartProcess runs.
type ProcessOptions struct {
	// Name is how errors refer to the process ("etcd", "controller leader").
	Name   string
	Binary string
	Args   []string
	// Env is added to the environment the process inherits (later entries win),
	// which childEnv filters.
	Env []string
	// Dir is the working directory; empty means this program's.
	Dir string
	// Log receives stdout and stderr, after a first line with the command.
	Log string
	// AppendLog keeps what an earlier run wrote to Log; otherwise Log starts empty.
	AppendLog bool
}

// StartProcess starts o.Binary. The child gets its own process group (so Stop can
// signal it with anything it spawned, and a ^C in the terminal reaches only this
// program, which then stops its children in order) and, on Linux, a parent-death
// signal, so killing this program kills the child too. The parent-death signal
// follows the OS thread that forked: do not start a process from a goroutine locked
// with runtime.LockOSThread that later exits.
func StartProcess(o ProcessOptions) (*Process, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if o.AppendLog {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(o.Log, flags, 0o644)
	if err != nil {
		return nil, err
	}
	// The child writes to its own copy of the descriptor; ours is not needed after Start.
	defer f.Close()
	fmt.Fprintf(f, "# %s %s\n", o.Binary, strings.Join(o.Args, " "))

	cmd := exec.Command(o.Binary, o.Args...)
	cmd.Dir = o.Dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(childEnv(), o.Env...)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Name, err)
	}
	p := &Process{name: o.Name, log: o.Log, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// childEnv is this program's environment without KUBECONFIG, and without the
// CLAIMWARDEN_* variables. Every child gets an explicit --kubeconfig, and one
// inherited from the developer's shell must never point a test at a real cluster.
// The claimwarden binary reads CLAIMWARDEN_* as its configuration and rejects the
// names it does not know; the other programs do not read them.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "CLAIMWARDEN_") {
			env = append(env, kv)
		}
	}
	return env
}

// Name is the name errors give the process.
func (p *Process) Name() string { return p.name }

// LogPath is the file holding the process's output.
func (p *Process) LogPath() string { return p.log }

// Pid is the process's ID, which is also its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process exited (the error of exec.Cmd.Wait: nil for status 0).
// Read it only once Done is closed.
func (p *Process) Err() error { return p.err }

// Exited returns nil while the process runs, and once it has ended an error saying
// so with the end of its log. Waits call it to fail at once, pointing at the log,
// instead of at their deadline.
func (p *Process) Exited() error {
	select {
	case <-p.done:
	default:
		return nil
	}
	p.mu.Lock()
	p.reported = true
	p.mu.Unlock()
	return fmt.Errorf("%s exited (%v); log %s:\n%s", p.name, p.err, p.log, TailFile(p.log, 20))
}

// TailFile returns the last n lines of a file (a log), for error messages.
func TailFile(path string, n int) string {
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
