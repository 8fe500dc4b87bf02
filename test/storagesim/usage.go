package storagesim

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// Usage: the simulator serves, for every claim on its volumes, the volume
// statistics the kubelet exports (kubelet_volume_stats_*, labelled
// namespace and persistentvolumeclaim), from two annotations a test or a
// demo sets on the claim. The simulated file system has an inode per
// bytesPerInode bytes (ext4's default ratio), used in the same proportion.
const (
	// UsedAnnotation on a claim is how much its volume holds (a quantity)
	// from the moment the simulator sees the annotation.
	UsedAnnotation = "storagesim.claimwarden.dev/used"
	// FillPerMinuteAnnotation on a claim is how fast its volume fills from
	// then on (a quantity per minute); use stops at the capacity.
	FillPerMinuteAnnotation = "storagesim.claimwarden.dev/fill-per-minute"

	bytesPerInode = 16 * 1024
)

// usageMark is when the simulator first saw a claim's usage annotations
// as they stand: the fill runs from then.
type usageMark struct {
	uid        types.UID
	used, fill string
	at         time.Time
}

// MetricsHandler serves the volume statistics in the Prometheus text format
// at the path it is mounted on, as a kubelet's /metrics does.
func (s *Simulator) MetricsHandler() http.Handler {
	s.init()
	reg := prometheus.NewRegistry()
	reg.MustRegister(&volumeStats{s: s})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
}

var (
	statLabels       = []string{"namespace", "persistentvolumeclaim"}
	capacityBytes    = prometheus.NewDesc("kubelet_volume_stats_capacity_bytes", "Capacity in bytes of the volume (simulated).", statLabels, nil)
	usedBytes        = prometheus.NewDesc("kubelet_volume_stats_used_bytes", "Number of used bytes in the volume (simulated).", statLabels, nil)
	availableBytes   = prometheus.NewDesc("kubelet_volume_stats_available_bytes", "Number of available bytes in the volume (simulated).", statLabels, nil)
	inodesTotal      = prometheus.NewDesc("kubelet_volume_stats_inodes", "Maximum number of inodes in the volume (simulated).", statLabels, nil)
	inodesUsed       = prometheus.NewDesc("kubelet_volume_stats_inodes_used", "Number of used inodes in the volume (simulated).", statLabels, nil)
	inodesFree       = prometheus.NewDesc("kubelet_volume_stats_inodes_free", "Number of free inodes in the volume (simulated).", statLabels, nil)
	volumeStatsDescs = []*prometheus.Desc{capacityBytes, usedBytes, availableBytes, inodesTotal, inodesUsed, inodesFree}
)

// volumeStats collects the statistics of the claims on the simulator's
// volumes that report a capacity, from the cache, at each scrape.
type volumeStats struct{ s *Simulator }

func (v *volumeStats) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range volumeStatsDescs {
		ch <- d
	}
}

func (v *volumeStats) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	claims, err := v.s.ownClaims(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(usedBytes, err)
		return
	}
	for i := range claims {
		pvc := &claims[i]
		capacity := pvc.Status.Capacity[corev1.ResourceStorage]
		if capacity.IsZero() {
			continue
		}
		total := float64(capacity.Value())
		used := min(float64(v.s.used(pvc)), total)
		labels := []string{pvc.Namespace, pvc.Name}
		inodes := float64(capacity.Value() / bytesPerInode)
		usedInodes := float64(int64(used) / bytesPerInode)
		for _, m := range []struct {
			desc  *prometheus.Desc
			value float64
		}{
			{capacityBytes, total}, {usedBytes, used}, {availableBytes, total - used},
			{inodesTotal, inodes}, {inodesUsed, usedInodes}, {inodesFree, inodes - usedInodes},
		} {
			ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, m.value, labels...)
		}
	}
}

// ownClaims are the bound claims whose volumes the simulator provisioned.
func (s *Simulator) ownClaims(ctx context.Context) ([]corev1.PersistentVolumeClaim, error) {
	var pvs corev1.PersistentVolumeList
	if err := s.Client.List(ctx, &pvs); err != nil {
		return nil, err
	}
	ours := map[string]bool{}
	for i := range pvs.Items {
		if csi := pvs.Items[i].Spec.CSI; csi != nil && csi.Driver == s.Provisioner {
			ours[pvs.Items[i].Name] = true
		}
	}
	var pvcs corev1.PersistentVolumeClaimList
	if err := s.Client.List(ctx, &pvcs); err != nil {
		return nil, err
	}
	var out []corev1.PersistentVolumeClaim
	for _, pvc := range pvcs.Items {
		if pvc.Status.Phase == corev1.ClaimBound && ours[pvc.Spec.VolumeName] {
			out = append(out, pvc)
		}
	}
	return out, nil
}

// used is how many bytes the claim's volume holds now, by its annotations
// (0 without them; a malformed one counts as absent).
func (s *Simulator) used(pvc *corev1.PersistentVolumeClaim) int64 {
	used, fill := pvc.Annotations[UsedAnnotation], pvc.Annotations[FillPerMinuteAnnotation]
	if used == "" && fill == "" {
		return 0
	}
	now := s.now()
	key := types.NamespacedName{Namespace: pvc.Namespace, Name: pvc.Name}
	s.mu.Lock()
	mark, ok := s.usage[key]
	if !ok || mark.uid != pvc.UID || mark.used != used || mark.fill != fill {
		mark = usageMark{uid: pvc.UID, used: used, fill: fill, at: now}
		s.usage[key] = mark
	}
	s.mu.Unlock()
	var bytes int64
	if q, err := resource.ParseQuantity(used); err == nil {
		bytes = q.Value()
	}
	if q, err := resource.ParseQuantity(fill); err == nil {
		bytes += int64(float64(q.Value()) * now.Sub(mark.at).Minutes())
	}
	return max(bytes, 0)
}
