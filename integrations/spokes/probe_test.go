package spokes

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// The probe's metric follows the spoke's API server down and up again.
func TestProbeFollowsTheAPIServer(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	p := &Probe{Spoke: Spoke{Name: "probe-test", Server: env.Config.Host, Config: env.Config}, Interval: 100 * time.Millisecond, Log: logr.Discard()}
	go func() { done <- p.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Probe.Start: %v", err)
		}
	})
	gauge := reachable.WithLabelValues("probe-test")
	wantGauge := func(want float64, what string) {
		t.Helper()
		testenv.EventuallyT(t, what, 30*time.Second, func() error {
			if got := testutil.ToFloat64(gauge); got != want {
				return fmt.Errorf("claimwarden_cluster_reachable is %v, want %v", got, want)
			}
			return nil
		})
	}
	wantGauge(1, "the probe to see the API server answer")
	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	wantGauge(0, "the probe to see the API server gone")
	if err := env.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	wantGauge(1, "the probe to see the API server back")
}
