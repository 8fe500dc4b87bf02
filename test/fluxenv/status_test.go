package fluxenv

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReady(t *testing.T) {
	cond := func(status metav1.ConditionStatus, gen int64) []metav1.Condition {
		return []metav1.Condition{{Type: meta.ReadyCondition, Status: status, ObservedGeneration: gen, Reason: "R", Message: "M"}}
	}
	for _, tc := range []struct {
		name       string
		conditions []metav1.Condition
		want       bool
		message    string
	}{
		{"no condition", nil, false, "no Ready condition yet"},
		{"true for this generation", cond(metav1.ConditionTrue, 2), true, "M"},
		{"true for an older generation", cond(metav1.ConditionTrue, 1), false, "M"},
		{"false", cond(metav1.ConditionFalse, 2), false, "M"},
		{"unknown", cond(metav1.ConditionUnknown, 2), false, "M"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks := Kustomization("flux-system", "fleet", "fleet", "./")
			ks.Generation = 2
			ks.Status.Conditions = tc.conditions
			ok, _, message := Ready(ks)
			if ok != tc.want || message != tc.message {
				t.Errorf("Ready = %v, message %q; want %v, %q", ok, message, tc.want, tc.message)
			}
		})
	}
}

func TestConstructors(t *testing.T) {
	repo := GitRepository("flux-system", "fleet", "http://127.0.0.1:1/o/fleet.git", time.Minute)
	if repo.Spec.Reference == nil || repo.Spec.Reference.Branch != Branch || repo.Spec.Interval.Duration != time.Minute {
		t.Errorf("GitRepository spec %+v, want branch %s every 1m", repo.Spec, Branch)
	}
	ks := Kustomization("flux-system", "fleet", "fleet", "./")
	if ks.Spec.SourceRef.Kind != "GitRepository" || ks.Spec.SourceRef.Name != "fleet" || !ks.Spec.Prune || ks.Spec.Path != "./" {
		t.Errorf("Kustomization spec %+v, want GitRepository fleet, path ./, prune", ks.Spec)
	}
	// The scheme must know both kinds, or a client cannot read them.
	s := Scheme()
	for _, obj := range []Object{repo, ks} {
		if gvks, _, err := s.ObjectKinds(obj); err != nil || len(gvks) != 1 || gvks[0].Kind != obj.GetObjectKind().GroupVersionKind().Kind {
			t.Errorf("Scheme().ObjectKinds(%T) = %v, %v; want %s", obj, gvks, err, obj.GetObjectKind().GroupVersionKind())
		}
	}
}
