package main

import (
	"net/http/httptest"
	"testing"
	"time"
)

// Requests are counted by endpoint, the repository left out; a percentile
// is a nearest rank.
func TestEndpointAndPercentile(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/repos/claimwarden/fleet-01/pulls?state=all": "GET /api/v1/repos/{repo}/pulls",
		"/api/v1/repos/claimwarden/fleet-01/contents/a/b":    "GET /api/v1/repos/{repo}/contents",
		"/api/v1/user": "GET /api/v1/user",
	} {
		if got := endpoint(httptest.NewRequest("GET", path, nil)); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	d := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
	if percentile(d, 50) != 2*time.Second || percentile(d, 100) != 4*time.Second || percentile(nil, 50) != 0 {
		t.Errorf("percentiles of %v: %v, %v", d, percentile(d, 50), percentile(d, 100))
	}
}
