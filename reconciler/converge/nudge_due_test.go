package converge

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// The nudge waits 10s after the creation and after the last nudge; an
// annotation that is not a time, or a time in the future (a tenant's),
// does not hold it back.
func TestNudgeDue(t *testing.T) {
	created := time.Unix(1_700_000_000, 0)
	after := 10 * time.Second
	for _, tc := range []struct {
		name       string
		now        time.Duration // since creation
		annotation string
		want       bool
	}{
		{"right after the creation", time.Second, "", false},
		{"long after the creation, never nudged", 11 * time.Second, "", true},
		{"nudged a second ago", 20 * time.Second, created.Add(19 * time.Second).UTC().Format(time.RFC3339), false},
		{"nudged 10s ago", 20 * time.Second, created.Add(10 * time.Second).UTC().Format(time.RFC3339), true},
		{"a time in the future", 20 * time.Second, "2999-01-01T00:00:00Z", true},
		{"not a time", 20 * time.Second, "soon", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{
				CreationTimestamp: metav1.NewTime(created),
				Annotations:       map[string]string{v1alpha1.AdoptionNudgedAnnotation: tc.annotation},
			}}
			if got := nudgeDue(live, created.Add(tc.now), after); got != tc.want {
				t.Errorf("nudgeDue = %v, want %v", got, tc.want)
			}
		})
	}
}
