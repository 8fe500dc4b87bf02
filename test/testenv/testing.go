package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testStartTimeout is generous: CI machines can be several times slower than a laptop.
const testStartTimeout = 3 * time.Minute

// RunTests is a whole TestMain: it starts an Env, stores it in *env, runs the
// package's tests, and stops the Env. When a test fails it prints the last lines of
// every component log and keeps a temporary Dir so the full logs can be read. It
// returns the exit code for os.Exit:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, testenv.Options{Kwok: true}, &env)) }
func RunTests(m *testing.M, o Options, env **Env) int {
	ctx, cancel := context.WithTimeout(context.Background(), testStartTimeout)
	e, err := Start(ctx, o)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*env = e
	code := m.Run()
	if code != 0 {
		e.KeepDir = true
		fmt.Fprintf(os.Stderr, "testenv: tests failed; full logs kept in %s; last lines:\n%s", e.Dir, e.LogTails(30))
	}
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// StartT starts an Env for one test (or benchmark) and stops it in t.Cleanup. A
// failed test gets the log tails in its output and keeps a temporary Dir.
func StartT(t testing.TB, o Options) *Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testStartTimeout)
	defer cancel()
	e, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.KeepDir = true
			t.Logf("testenv: full logs kept in %s; last lines:\n%s", e.Dir, e.LogTails(30))
		}
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// Client is a client of cfg that knows client-go's types and those adds
// registers; it fails t when it cannot be built.
func Client(t testing.TB, cfg *rest.Config, adds ...func(*runtime.Scheme) error) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, adds...) {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RunT runs r (a Runnable: Credentials, a Reporter) until the test ends:
// its context ends in t.Cleanup, and Start must then return nil within 10s.
// Cleanups run last-in first-out, so call it before registering anything
// that must happen while r still runs.
func RunT(t testing.TB, r interface{ Start(context.Context) error }) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Start returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Start did not return 10s after its context ended")
		}
	})
}

// EventuallyT calls f every 100ms until it returns nil, failing the test
// with f's last error once timeout has passed.
func EventuallyT(t testing.TB, what string, timeout time.Duration, f func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = f()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: still %v after %s", what, last, timeout)
	}
}
