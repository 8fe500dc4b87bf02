package plan

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

func TestBuildHoldsClaimsBelowThePartition(t *testing.T) {
	three := claims(claim("data", 0, "grow"), claim("data", 1, "grow"), claim("data", 2, "grow"))
	p := Build(three, Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 5, Partition: Partition{Partition: 2}})
	if got := patchNames(p); !reflect.DeepEqual(got, []string{"data-web-2"}) {
		t.Fatalf("patch %v, want only data-web-2 (maxConcurrent 5 must not let the held claims through)", got)
	}
	for _, s := range p.Steps[:2] {
		if s.Phase != v1alpha1.ClaimPending || !strings.Contains(s.Message, "partition 2 holds ordinals below 2") || !strings.Contains(s.Message, "storage 10Gi → 20Gi") {
			t.Errorf("%s: %s %q, want Pending naming the partition and the patch to come", s.Claim.Name, s.Phase, s.Message)
		}
	}
	if p.Blocked != "" || p.Done {
		t.Errorf("blocked %q done %v: a partition is a choice, not a failure, and the rollout is not done", p.Blocked, p.Done)
	}
	if !strings.Contains(p.Held, "partition 2 holds 2 claim(s) of ordinals below 2") {
		t.Errorf("held %q", p.Held)
	}

	// The partition moved to 0 once the canary was compatible: the others
	// proceed, highest ordinal first, maxConcurrent at a time.
	moved := claims(claim("data", 0, "grow"), claim("data", 1, "grow"), claim("data", 2, "compatible"))
	p = Build(moved, Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 1})
	if got := patchNames(p); !reflect.DeepEqual(got, []string{"data-web-1"}) || p.Held != "" {
		t.Errorf("patch %v held %q, want data-web-1 and nothing held", got, p.Held)
	}
}

func TestBuildPartitionCountsFromTheStartOrdinal(t *testing.T) {
	// The StatefulSet controller compares the partition with the index, the
	// ordinal minus spec.ordinals.start.
	r := claims(claim("data", 5, "grow"), claim("data", 6, "grow"), claim("data", 7, "resizing"))
	p := Build(r, Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 2, Partition: Partition{Partition: 1, Start: 5}})
	if got := patchNames(p); !reflect.DeepEqual(got, []string{"data-web-6"}) {
		t.Errorf("patch %v, want data-web-6", got)
	}
	if s := p.Steps[0]; s.Phase != v1alpha1.ClaimPending || !strings.Contains(s.Message, "holds ordinals below 6") {
		t.Errorf("data-web-5: %s %q", s.Phase, s.Message)
	}
	// A held claim already failing or resizing says so, not the partition.
	held := Build(claims(claim("data", 0, "resizing"), claim("data", 1, "compatible")), Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 1, Partition: Partition{Partition: 2}})
	if s := held.Steps[0]; s.Phase != v1alpha1.ClaimResizing || held.Held != "" {
		t.Errorf("resizing claim below the partition: %s %q, held %q", s.Phase, s.Message, held.Held)
	}
}

func TestPartitionOf(t *testing.T) {
	rolling := func(p *int32) appsv1.StatefulSetUpdateStrategy {
		return appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: p}}
	}
	cases := []struct {
		name     string
		strategy appsv1.StatefulSetUpdateStrategy
		ordinals *appsv1.StatefulSetOrdinals
		want     Partition
	}{
		{name: "no strategy", want: Partition{}},
		{name: "rolling without partition", strategy: rolling(nil), want: Partition{}},
		{name: "partition 2", strategy: rolling(ptr.To[int32](2)), want: Partition{Partition: 2}},
		{name: "type defaulted", strategy: appsv1.StatefulSetUpdateStrategy{RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}}, want: Partition{Partition: 1}},
		{name: "start ordinal", strategy: rolling(ptr.To[int32](1)), ordinals: &appsv1.StatefulSetOrdinals{Start: 5}, want: Partition{Partition: 1, Start: 5}},
		{name: "OnDelete has no partition", strategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](2)}}, want: Partition{}},
	}
	for _, c := range cases {
		sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: c.strategy, Ordinals: c.ordinals}}
		if got := PartitionOf(sts); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func patchNames(p Plan) []string {
	var names []string
	for _, c := range p.Patch {
		names = append(names, c.Name)
	}
	return names
}
