// Package controllerproc runs the claimwarden binary as a subprocess, as a user
// runs `claimwarden run` outside a cluster, for the e2e tests (test/e2e), the demo
// (test/demo) and the scale run (test/scale). The process is a testenv.Process: its
// own process group, a parent-death signal on Linux, and stdout and stderr in a log
// file.
package controllerproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// Options say how to run `claimwarden run`.
type Options struct {
	// Name is how errors refer to the process ("claimwarden controller").
	Name string
	// Binary is the claimwarden binary (see BinaryPath).
	Binary string
	// Kubeconfig is passed as --kubeconfig; the process gets no KUBECONFIG.
	Kubeconfig string
	// Log receives stdout and stderr; it starts empty.
	Log string
	// LogFormat is --log-format: "json" or "console".
	LogFormat string
	// Metrics serves /metrics on a free loopback port (Process.MetricsAddr);
	// without it, --metrics-addr 0 turns metrics off.
	Metrics bool
	// LeaderElectionNamespace turns leader election on, as deployed, with the
	// Lease in this namespace; empty runs without leader election.
	LeaderElectionNamespace string
	// ExtraArgs follow the flags above, e.g. --config FILE.
	ExtraArgs []string
	// Env is added to the process's environment, e.g. the chaos build's
	// crash point (reconciler/crashpoint).
	Env []string
}

// Process is a running `claimwarden run`.
type Process struct {
	*testenv.Process
	// HealthAddr serves /healthz and /readyz (see WaitReady).
	HealthAddr string
	// MetricsAddr serves /metrics; empty without Options.Metrics.
	MetricsAddr string
}

// Start starts the controller on free loopback ports. It does not wait for it to
// be ready: callers register its cleanup first, then call WaitReady.
func Start(o Options) (*Process, error) {
	ports, err := testenv.FreePorts(2)
	if err != nil {
		return nil, err
	}
	p := &Process{HealthAddr: loopback(ports[0])}
	metrics := "0" // off
	if o.Metrics {
		p.MetricsAddr = loopback(ports[1])
		metrics = p.MetricsAddr
	}
	args := []string{"run", "--kubeconfig", o.Kubeconfig}
	if o.LeaderElectionNamespace == "" {
		// Outside a Pod the controller's own namespace is claimwarden-system,
		// which only the runs with leader election create; the journal key
		// Secret then goes to default, which every cluster has.
		args = append(args, "--leader-election=false", "--journal-key-namespace", "default")
	} else {
		args = append(args, "--leader-election=true", "--leader-election-namespace", o.LeaderElectionNamespace)
	}
	args = append(args, "--metrics-addr", metrics, "--health-addr", p.HealthAddr, "--log-format", o.LogFormat)
	args = append(args, o.ExtraArgs...)
	p.Process, err = testenv.StartProcess(testenv.ProcessOptions{Name: o.Name, Binary: o.Binary, Args: args, Env: o.Env, Log: o.Log})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// BinaryPath returns <repo root>/bin/claimwarden, where `make build` puts it. It
// builds nothing: what runs is the binary users get, so a missing one says what
// to run instead of being built behind the developer's back.
func BinaryPath() (string, error) { return binary("claimwarden", "make build") }

// ChaosBinaryPath returns <repo root>/bin/claimwarden-chaos, the same
// controller built with the crash points of reconciler/crashpoint (`make
// build-chaos`).
func ChaosBinaryPath() (string, error) { return binary("claimwarden-chaos", "make build-chaos") }

func binary(name, how string) (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin", name)
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return "", fmt.Errorf("no controller binary at %s: run `%s`", bin, how)
	}
	return bin, nil
}

// Version is what `bin version` prints, to say which build runs: a stale binary
// runs stale code.
func Version(ctx context.Context, bin string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s version: %v: %s", bin, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}
