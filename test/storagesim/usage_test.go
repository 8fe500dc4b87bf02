package storagesim

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads the simulator's statistics of ns/name as the kubelet names them.
func scrape(t *testing.T, s *Simulator, ns, name string) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	s.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body.String())
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for family, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && labels["persistentvolumeclaim"] == name {
				out[family] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// The kubelet's volume statistics follow the claim's annotations: what it
// holds, filling at the set rate from when the simulator saw them, never
// past the capacity; inodes in proportion.
func TestVolumeStatsFollowTheFillRate(t *testing.T) {
	pvc, pv := boundPair() // 1Gi
	pvc.Annotations = map[string]string{UsedAnnotation: "256Mi", FillPerMinuteAnnotation: "128Mi"}
	s, clock := newFakeSim(t, pvc, pv)

	got := scrape(t, s, "ns", "data-web-0")
	const mi = 1 << 20
	if got["kubelet_volume_stats_capacity_bytes"] != 1024*mi || got["kubelet_volume_stats_used_bytes"] != 256*mi ||
		got["kubelet_volume_stats_available_bytes"] != 768*mi {
		t.Errorf("at first sight %v, want 1Gi capacity, 256Mi used, 768Mi available", got)
	}
	if got["kubelet_volume_stats_inodes"] != 65536 || got["kubelet_volume_stats_inodes_used"] != 16384 || got["kubelet_volume_stats_inodes_free"] != 49152 {
		t.Errorf("inodes %v, want 65536 of which 16384 used", got)
	}

	clock.Advance(3 * time.Minute)
	if used := scrape(t, s, "ns", "data-web-0")["kubelet_volume_stats_used_bytes"]; used != 640*mi {
		t.Errorf("after 3 minutes at 128Mi/min: %v used, want 640Mi", used)
	}
	clock.Advance(time.Hour)
	if got := scrape(t, s, "ns", "data-web-0"); got["kubelet_volume_stats_used_bytes"] != 1024*mi || got["kubelet_volume_stats_available_bytes"] != 0 {
		t.Errorf("an hour later %v, want full and never past the capacity", got)
	}
}

// A claim without annotations is empty; one not on the simulator's
// volumes is not reported.
func TestVolumeStatsOnlyForOwnVolumes(t *testing.T) {
	pvc, pv := boundPair()
	pv.Spec.CSI.Driver = "other.example.com"
	s, _ := newFakeSim(t, pvc, pv)
	if got := scrape(t, s, "ns", "data-web-0"); len(got) != 0 {
		t.Errorf("another driver's volume reported: %v", got)
	}
	pvc2, pv2 := boundPair()
	s2, _ := newFakeSim(t, pvc2, pv2)
	if got := scrape(t, s2, "ns", "data-web-0"); got["kubelet_volume_stats_used_bytes"] != 0 || got["kubelet_volume_stats_capacity_bytes"] == 0 {
		t.Errorf("a claim without usage: %v, want reported, empty", got)
	}
}
