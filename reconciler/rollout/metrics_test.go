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
	recordMetrics(gone, claims, true)
	recordMetrics(kept, claims, false)
	defer forgetMetrics(kept)
	if got, want := testutil.CollectAndCount(claimsByPhase), claimsBefore+2*len(phases); got != want {
		t.Fatalf("%d claim series after recording two StatefulSets, want %d", got, want)
	}
	forgetMetrics(gone)
	if got, want := testutil.CollectAndCount(claimsByPhase), claimsBefore+len(phases); got != want {
		t.Errorf("%d claim series after forgetting one, want %d", got, want)
	}
	if got, want := testutil.CollectAndCount(stalledRollouts), stalledBefore+1; got != want {
		t.Errorf("%d stalled series after forgetting one, want %d", got, want)
	}
	var m dto.Metric
	if err := claimsByPhase.WithLabelValues(kept.Namespace, kept.Name, string(v1alpha1.ClaimFailed)).Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetGauge().GetValue(); got != 1 {
		t.Errorf("kept StatefulSet's Failed claims = %v, want 1", got)
	}
}
