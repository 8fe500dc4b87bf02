package controllerproc

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// fakeEnv makes this test binary, started as the controller, serve /readyz at
// once and /metrics only later, as the manager may: its two servers start
// independently.
const fakeEnv = "CONTROLLERPROC_FAKE_METRICS_DELAY"

func TestMain(m *testing.M) {
	if d := os.Getenv(fakeEnv); d != "" {
		serveLikeAManager(d)
		return
	}
	os.Exit(m.Run())
}

func serveLikeAManager(delay string) {
	d, err := time.ParseDuration(delay)
	if err != nil {
		panic(err)
	}
	flag := func(name string) string {
		i := slices.Index(os.Args, name)
		if i < 0 || i+1 >= len(os.Args) {
			panic("no " + name)
		}
		return os.Args[i+1]
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	go func() { panic(http.ListenAndServe(flag("--health-addr"), ok)) }()
	time.Sleep(d)
	panic(http.ListenAndServe(flag("--metrics-addr"), ok))
}

// A caller that scrapes right after WaitReady must find /metrics listening
// (the e2e autoresize test once met a refused connection there).
func TestWaitReadyWaitsForMetrics(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Options{
		Name:    "fake controller",
		Binary:  self,
		Log:     filepath.Join(t.TempDir(), "fake.log"),
		Metrics: true,
		Env:     []string{fakeEnv + "=500ms"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Terminate(5 * time.Second) })
	if err := p.WaitReady(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", p.MetricsAddr, time.Second)
	if err != nil {
		t.Fatalf("after WaitReady: %v", err)
	}
	conn.Close()
}
