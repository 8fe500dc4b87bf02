package rollout

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// Forgetting a StatefulSet drops every series it had, of every phase, and
// leaves those of another StatefulSet of the same namespace alone.
func TestForgetMetricsDropsEverySeriesOfTheStatefulSet(t *testing.T) {
	gone := types.NamespacedName{Namespace: "metrics-test", Name: "gone"}
	kept := types.NamespacedName{Namespace: "metrics-test", Name: "kept"}
	claimsBefore, stalledBefore := testutil.CollectAndCount(claimsByPhase), testutil.CollectAndCount(stalledRollouts)
	claims := []v1alpha1.ClaimStatus{{Phase: v1alpha1.ClaimResizing}, {Phase: v1alpha1.ClaimFailed}}
	recordMetrics(inCluster, gone, claims, true)
	recordMetrics(inCluster, kept, claims, false)
	defer forgetMetrics(inCluster, kept)
	if got, want := testutil.CollectAndCount(claimsByPhase), claimsBefore+2*len(claims); got != want {
		t.Fatalf("%d claim series after recording two StatefulSets, want %d", got, want)
	}
	if got, want := testutil.CollectAndCount(stalledRollouts), stalledBefore+1; got != want {
		t.Errorf("%d stalled series with one StatefulSet stalled, want %d", got, want)
	}
	forgetMetrics(inCluster, gone)
	if got, want := testutil.CollectAndCount(claimsByPhase), claimsBefore+len(claims); got != want {
		t.Errorf("%d claim series after forgetting one, want %d", got, want)
	}
	if got, want := testutil.CollectAndCount(stalledRollouts), stalledBefore; got != want {
		t.Errorf("%d stalled series after forgetting the stalled one, want %d", got, want)
	}
	var m dto.Metric
	if err := claimsByPhase.WithLabelValues(inCluster, kept.Namespace, kept.Name, string(v1alpha1.ClaimFailed)).Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetGauge().GetValue(); got != 1 {
		t.Errorf("kept StatefulSet's Failed claims = %v, want 1", got)
	}
}

// Issue 31: no zero-valued series. A rollout at rest has one series (its
// compatible claims); phases it left and a stall it came out of are gone.
func TestRecordMetricsKeepsNoZeroSeries(t *testing.T) {
	key := types.NamespacedName{Namespace: "metrics-test", Name: "rest"}
	defer forgetMetrics(inCluster, key)
	claimsBefore, stalledBefore := testutil.CollectAndCount(claimsByPhase), testutil.CollectAndCount(stalledRollouts)
	recordMetrics(inCluster, key, []v1alpha1.ClaimStatus{{Phase: v1alpha1.ClaimPatching}, {Phase: v1alpha1.ClaimPending}, {Phase: v1alpha1.ClaimCompatible}}, true)
	if got, want := testutil.CollectAndCount(claimsByPhase), claimsBefore+3; got != want {
		t.Fatalf("%d claim series in three phases, want %d", got, want)
	}
	recordMetrics(inCluster, key, []v1alpha1.ClaimStatus{{Phase: v1alpha1.ClaimCompatible}, {Phase: v1alpha1.ClaimCompatible}, {Phase: v1alpha1.ClaimCompatible}}, false)
	if got, want := testutil.CollectAndCount(claimsByPhase), claimsBefore+1; got != want {
		t.Errorf("%d claim series at rest, want %d", got, want)
	}
	if got := testutil.CollectAndCount(stalledRollouts); got != stalledBefore {
		t.Errorf("%d stalled series once no longer stalled, want %d", got, stalledBefore)
	}
	var m dto.Metric
	if err := claimsByPhase.WithLabelValues(inCluster, key.Namespace, key.Name, string(v1alpha1.ClaimCompatible)).Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetGauge().GetValue(); got != 3 {
		t.Errorf("compatible claims = %v, want 3", got)
	}
}

// The same namespace and name in two clusters are two rollouts: each has
// its series, and forgetting one leaves the other's.
func TestMetricsKeepTheClustersApart(t *testing.T) {
	key := types.NamespacedName{Namespace: "metrics-test", Name: "twice"}
	spoke := ClusterLabel("spoke-a")
	claimsBefore, stalledBefore := testutil.CollectAndCount(claimsByPhase), testutil.CollectAndCount(stalledRollouts)
	recordMetrics(ClusterLabel(""), key, []v1alpha1.ClaimStatus{{Phase: v1alpha1.ClaimCompatible}}, false)
	defer forgetMetrics(ClusterLabel(""), key)
	recordMetrics(spoke, key, []v1alpha1.ClaimStatus{{Phase: v1alpha1.ClaimCompatible}, {Phase: v1alpha1.ClaimCompatible}}, true)
	if got, want := testutil.CollectAndCount(claimsByPhase), claimsBefore+2; got != want {
		t.Fatalf("%d claim series for one StatefulSet name in two clusters, want %d", got, want)
	}
	forgetMetrics(spoke, key)
	if got := testutil.CollectAndCount(stalledRollouts); got != stalledBefore {
		t.Errorf("%d stalled series after forgetting the spoke's, want %d", got, stalledBefore)
	}
	var m dto.Metric
	if err := claimsByPhase.WithLabelValues(inCluster, key.Namespace, key.Name, string(v1alpha1.ClaimCompatible)).Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetGauge().GetValue(); got != 1 {
		t.Errorf("in-cluster compatible claims = %v after the spoke's were forgotten, want 1", got)
	}
	if got, want := testutil.CollectAndCount(claimsByPhase), claimsBefore+1; got != want {
		t.Errorf("%d claim series after forgetting the spoke's, want %d", got, want)
	}
}
