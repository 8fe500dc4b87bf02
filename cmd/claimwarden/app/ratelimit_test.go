package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/claimwarden/claimwarden/config"
)

// TestClientRateLimit covers each kubeAPIQPS setting against a server with
// and one without API Priority and Fairness; the real API server's answer is
// checked by TestCleanStartLogsNoError. httptest plays only the header the
// flowcontrol probe reads.
func TestClientRateLimit(t *testing.T) {
	server := func(apf bool) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if apf {
				w.Header().Set("X-Kubernetes-PF-FlowSchema-UID", "8d5a2f0e")
			}
		}))
		t.Cleanup(s.Close)
		return s
	}
	withAPF, without := server(true), server(false)
	for _, tc := range []struct {
		name       string
		url        string
		qps        float32
		wantQPS    float32
		wantBurst  int
		wantReport string
	}{
		{"auto, APF", withAPF.URL, 0, -1, -1, "none: the API server has API Priority and Fairness"},
		{"auto, no APF", without.URL, 0, config.DefaultKubeAPIQPS, 300, "50 requests/s, burst 300"},
		{"auto, server unreachable", "http://127.0.0.1:1", 0, config.DefaultKubeAPIQPS, 300, "50 requests/s, burst 300"},
		{"explicit limit kept despite APF", withAPF.URL, 20, 20, 300, "20 requests/s, burst 300"},
		{"negative: none", without.URL, -1, -1, -1, "none: kubeAPIQPS is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.KubeAPIQPS = tc.qps
			c := &rest.Config{Host: tc.url}
			got := setClientRateLimit(context.Background(), c, cfg)
			if c.QPS != tc.wantQPS || c.Burst != tc.wantBurst || got != tc.wantReport {
				t.Errorf("QPS %g, burst %d, %q; want %g, %d, %q", c.QPS, c.Burst, got, tc.wantQPS, tc.wantBurst, tc.wantReport)
			}
		})
	}
}
