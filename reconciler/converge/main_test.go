package converge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/test/testenv"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The control plane is started on first use rather than in TestMain, so that
// `go test -run 'Prepare|Immutable'` runs the pure tests in milliseconds.
var (
	envOnce sync.Once
	env     *testenv.Env
	envErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		if code != 0 {
			env.KeepDir = true
			fmt.Fprintf(os.Stderr, "testenv: full logs kept in %s; last lines:\n%s", env.Dir, env.LogTails(30))
		}
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// cluster returns clients of the shared control plane (kube-apiserver,
// kube-controller-manager with the StatefulSet controller and garbage
// collector, kube-scheduler, kwok), starting it on first use.
func cluster(t *testing.T) (client.WithWatch, kubernetes.Interface) {
	t.Helper()
	envOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		began := time.Now()
		env, envErr = testenv.Start(ctx, testenv.Options{
			Controllers: true, Kwok: true,
			CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")},
		})
		if envErr == nil {
			t.Logf("control plane started in %s", time.Since(began).Round(time.Millisecond))
		}
	})
	if envErr != nil {
		t.Fatal(envErr)
	}
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c, cs
}
