package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphanChildEnv makes the test binary, re-executed by
// TestKilledTestBinaryLeavesNoProcesses, start a control plane in the directory it
// names, print the component PIDs and wait to be killed.
const orphanChildEnv = "TESTENV_ORPHAN_CHILD"

func orphanChild() {
	e, err := Start(context.Background(), Options{Dir: os.Getenv(orphanChildEnv)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(strings.Join(pids(e), " "))
	// Block until the parent kills us; stdin stays open until then.
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(2)
}

func pids(e *Env) []string {
	var out []string
	for _, p := range e.Processes() {
		out = append(out, strconv.Itoa(p.Pid()))
	}
	return out
}

// alive reports whether pid still runs. A zombie counts as gone: it has exited and
// only waits for a reaper, which in a container may never come.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill(2)
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

func TestStopIsIdempotentAndLeavesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	e, err := Start(ctx, Options{})
	must(t, err)
	t.Logf("etcd + kube-apiserver started in %v", e.StartupTime)
	ids := pids(e)
	began := time.Now()
	must(t, e.Stop())
	t.Logf("Stop took %v", time.Since(began))
	must(t, e.Stop())
	for _, id := range ids {
		if pid, _ := strconv.Atoi(id); alive(pid) {
			t.Errorf("process %d still running after Stop", pid)
		}
	}
	if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
		t.Errorf("temporary dir %s not removed: %v", e.Dir, err)
	}
}

// TestKilledTestBinaryLeavesNoProcesses kills a test binary that has a control plane
// running, as `go test -timeout` or ^C would, and expects the components to die with it.
func TestKilledTestBinaryLeavesNoProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanChildEnv+"="+t.TempDir())
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	must(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Wait()
		t.Fatalf("child started no control plane: %v\n%s", err, stderr.String())
	}
	must(t, cmd.Process.Kill())
	_ = cmd.Wait()
	for _, id := range strings.Fields(line) {
		pid, err := strconv.Atoi(id)
		must(t, err)
		eventually(ctx, t, "process "+id+" gone after its test binary was killed", func() error {
			if alive(pid) {
				return fmt.Errorf("pid %d alive", pid)
			}
			return nil
		})
	}
}

func TestMissingBinariesSayWhatToRun(t *testing.T) {
	t.Setenv(BinDirEnv, t.TempDir())
	_, err := Start(t.Context(), Options{Kwok: true})
	if err == nil || !strings.Contains(err.Error(), "run `make testenv`") || !strings.Contains(err.Error(), "kwok-stages.yaml") {
		t.Fatalf("got %v, want the missing files and `make testenv`", err)
	}
}
