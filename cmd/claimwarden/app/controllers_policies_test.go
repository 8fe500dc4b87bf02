package app

import (
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/claimwarden/claimwarden/config"
)

// TestPolicyOptionsCarryTheLimits: the bounds of issue 12 reach the engine.
func TestPolicyOptionsCarryTheLimits(t *testing.T) {
	opts, err := policyOptions(config.Policies{
		ValueLimitBytes: 1 << 20,
		DecisionLogMask: []string{"/input/source/repository"},
		Bundles: []config.Bundle{{
			Name: "org", URL: "https://b/org.tar.gz", SizeLimitBytes: 1 << 10,
			TotalSizeLimitBytes: 1 << 20, DownloadTimeout: 5 * time.Second,
		}},
	}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	b := opts.Bundles[0]
	if opts.ValueLimitBytes != 1<<20 || !slices.Equal(opts.DecisionLogMask, []string{"/input/source/repository"}) ||
		b.SizeLimitBytes != 1<<10 || b.TotalSizeLimitBytes != 1<<20 || b.DownloadTimeout != 5*time.Second {
		t.Fatalf("options %+v", opts)
	}
}
