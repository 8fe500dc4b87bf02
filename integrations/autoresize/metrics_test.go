package autoresize

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/integrations/usage"
)

// A claim's series last as long as a check observes it: when its
// StatefulSet leaves autoresize, the next check's end deletes them.
func TestMetricsSweepClaimsNoLongerWatched(t *testing.T) {
	m := NewMetrics("")
	pvc := func(name string) corev1.PersistentVolumeClaim {
		return corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "metrics-sweep", Name: name},
			Status: corev1.PersistentVolumeClaimStatus{Capacity: corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(100, resource.BinarySI)}}}
	}
	used := map[string]usage.Usage{
		"data-a-0": {CapacityBytes: 100, UsedBytes: 50, GrowthBytesPerSecond: 1},
		"data-b-0": {CapacityBytes: 100, UsedBytes: 90},
		// Figures not decided on (a capacity that is not the claim's) are
		// no series.
		"data-c-0": {CapacityBytes: 1000, UsedBytes: 990},
	}
	series := func() int {
		return testutil.CollectAndCount(usedRatio, "claimwarden_autoresize_used_ratio") + testutil.CollectAndCount(secondsToFull, "claimwarden_autoresize_seconds_to_full")
	}
	before := series()
	m.observe([]corev1.PersistentVolumeClaim{pvc("data-a-0"), pvc("data-b-0"), pvc("data-c-0")}, used)
	m.sweep()
	if got := series() - before; got != 3 {
		t.Fatalf("after a check of two claims, one growing: %d series, want 3", got)
	}
	m.observe([]corev1.PersistentVolumeClaim{pvc("data-b-0")}, used)
	m.sweep()
	if got := series() - before; got != 1 {
		t.Errorf("after a check without data-a-0: %d series, want 1 (data-b-0's ratio)", got)
	}
	m.sweep()
	if got := series() - before; got != 0 {
		t.Errorf("after a check that watched nothing: %d series, want 0", got)
	}
}
