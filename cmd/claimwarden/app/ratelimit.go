package app

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/cli-utils/pkg/flowcontrol"
	"k8s.io/client-go/rest"

	"github.com/claimwarden/claimwarden/config"
)

// setClientRateLimit applies kubeAPIQPS/kubeAPIBurst to c and says which
// limit is in force. With kubeAPIQPS 0 it asks the API server whether it
// has API Priority and Fairness, as Flux's runtime client does: then the
// server queues and sheds every client's load fairly, and a client-side
// limit only slows a mass resize down (at 50 QPS, 6,000 claims took
// minutes waiting on the limiter with the API server idle). An answer that
// cannot be had keeps the limit: the cautious side.
func setClientRateLimit(ctx context.Context, c *rest.Config, cfg config.Config) string {
	qps, why := cfg.KubeAPIQPS, "kubeAPIQPS is negative"
	if qps == 0 {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if on, err := flowcontrol.IsEnabled(ctx, c); err == nil && on {
			qps, why = -1, "the API server has API Priority and Fairness"
		} else {
			qps = config.DefaultKubeAPIQPS
		}
	}
	if qps < 0 {
		// client-go builds no rate limiter for a negative QPS.
		c.QPS, c.Burst = -1, -1
		return "none: " + why
	}
	c.QPS, c.Burst = qps, cfg.KubeAPIBurst
	return fmt.Sprintf("%g requests/s, burst %d", qps, cfg.KubeAPIBurst)
}
