package rollout_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// The status is written as a merge patch, which leaves out a count that is 0
// before and after; `kubectl get vcr` would show blank Denied and OverSized
// columns. The schema defaults every count, so the object as the API server
// serves it (read here uncached and untyped, as kubectl reads it) has them all.
func TestEveryCountIsServedZerosIncluded(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "web", 2, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	waitRollout(t, c, key, "Ready", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 2
	})

	var u unstructured.Unstructured
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("VolumeClaimRollout"))
	if err := k8s.Get(context.Background(), key, &u); err != nil {
		t.Fatal(err)
	}
	counts, found, err := unstructured.NestedMap(u.Object, "status", "counts")
	if err != nil || !found {
		t.Fatalf("status.counts: found %v, %v in %v", found, err, u.Object["status"])
	}
	want := map[string]int64{"total": 2, "compatible": 2, "updating": 0, "waitingForRestart": 0, "denied": 0, "failed": 0, "overSized": 0}
	for name, n := range want {
		got, ok := counts[name]
		if !ok {
			t.Errorf("status.counts.%s is missing (counts %v)", name, counts)
			continue
		}
		if got != n {
			t.Errorf("status.counts.%s = %v (%T), want %d", name, got, got, n)
		}
	}
}
