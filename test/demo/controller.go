package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// controllerReadyTimeout bounds the wait for /readyz; the manager is ready
// in about a second, so much longer means it is stuck.
const controllerReadyTimeout = 30 * time.Second

// controller is the claimwarden binary, run as a subprocess exactly as a
// user would run it outside a cluster.
type controller struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed once the process has been reaped; err is set then
	err  error
	// told is set once exited has reported the exit, so that stop does not
	// report the same crash a second time.
	told bool
}

// startController runs `bin/claimwarden run` against env and waits for its
// /readyz. Its output goes to <env.Dir>/claimwarden.log.
func startController(ctx context.Context, env *testenv.Env) (*controller, error) {
	bin, err := filepath.Abs(controllerBin)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	health := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logPath := filepath.Join(env.Dir, "claimwarden.log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// The child keeps its own copy of the descriptor.
	defer f.Close()

	cmd := exec.Command(bin, "run",
		"--kubeconfig", env.Kubeconfig,
		"--leader-election=false",
		"--metrics-addr", "0",
		"--health-addr", health,
		"--log-format", "console")
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = controllerEnv()
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	c := &controller{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()

	if err := c.waitReady(ctx, "http://"+health+"/readyz"); err != nil {
		return nil, errors.Join(err, c.stop())
	}
	return c, nil
}

// waitReady polls /readyz until it answers 200, the process exits, or the deadline.
func (c *controller) waitReady(ctx context.Context, url string) error {
	hc := &http.Client{Timeout: time.Second}
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, controllerReadyTimeout, true, func(ctx context.Context) (bool, error) {
		if err := c.exited(); err != nil {
			return false, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, nil // not listening yet
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("claimwarden controller not ready at %s: %w (log %s)", url, err, c.log)
	}
	return nil
}

// exited returns an error, with the log's tail, once the controller has exited.
func (c *controller) exited() error {
	select {
	case <-c.done:
		c.told = true
		return fmt.Errorf("claimwarden controller exited (%v); last lines of %s:\n%s", c.err, c.log, tail(c.log, 10))
	default:
		return nil
	}
}

// stop sends SIGTERM (the controller shuts down gracefully on it) and SIGKILL
// after a grace period. The process group goes, in case it spawned anything.
// A crash nobody has reported yet is returned.
func (c *controller) stop() error {
	select {
	case <-c.done:
		if c.told {
			return nil
		}
		return c.exited()
	default:
	}
	pgid := -c.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-c.done
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	return nil
}

// controllerEnv is this process's environment without KUBECONFIG (the
// controller must only see the demo cluster) and without CLAIMWARDEN_*
// variables, which the controller reads as configuration and rejects when
// unknown (the Makefile sets CLAIMWARDEN_TESTENV for the tests).
func controllerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "CLAIMWARDEN_") {
			env = append(env, kv)
		}
	}
	return env
}

// freePort asks the kernel for a free loopback port. Someone could take it
// before the controller binds it; the controller then exits and waitReady says so.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
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
