package check

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// TestCostPricesClassesSurchargesAndNewClaims: an existing claim moving to
// a VolumeAttributesClass with a surcharge, and a new replica's claim on the
// default class, both priced as the max-cost-increase policy prices them.
func TestCostPricesClassesSurchargesAndNewClaims(t *testing.T) {
	e := &evaluator{defaultClass: "standard", prices: Prices{
		StorageClasses:          map[string]float64{"standard": 0.1},
		VolumeAttributesClasses: map[string]float64{"gold": 0.05},
	}}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(2)), VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				VolumeAttributesClassName: ptr.To("gold"),
				Resources:                 corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Gi")}},
			},
		}}},
	}
	existing := []corev1.PersistentVolumeClaim{*baseClaim(sts, &sts.Spec.VolumeClaimTemplates[0], 0, "standard")}
	existing[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("10Gi")
	existing[0].Spec.VolumeAttributesClassName = nil
	change := diff.ClaimChange{Name: "data-web-0", Template: "data", TemplateBytes: 20 << 30, VACTo: ptr.To("gold")}

	got := e.cost(sts, 0, existing, []diff.ClaimChange{change})
	// Before 10Gi × 0.10 = 1.00; after two claims of 20Gi × 0.15 = 6.00.
	want := Cost{CapacityFrom: "10Gi", CapacityTo: "40Gi", CapacityFromBytes: 10 << 30, CapacityToBytes: 40 << 30, MonthlyFrom: 1, MonthlyTo: 6, MonthlyDelta: 5}
	if got == nil || got.CapacityFrom != want.CapacityFrom || got.CapacityTo != want.CapacityTo || got.CapacityFromBytes != want.CapacityFromBytes ||
		got.CapacityToBytes != want.CapacityToBytes || got.MonthlyFrom != want.MonthlyFrom || got.MonthlyTo != want.MonthlyTo || got.MonthlyDelta != want.MonthlyDelta || len(got.Unpriced) != 0 {
		t.Errorf("cost = %+v, want %+v", got, want)
	}

	e.prices.StorageClasses = map[string]float64{"fast": 1}
	if got := e.cost(sts, 0, existing, []diff.ClaimChange{change}); got == nil || got.MonthlyTo != 0 || len(got.Unpriced) != 1 || got.Unpriced[0] != "standard" {
		t.Errorf("cost with standard unpriced = %+v, want no money and standard named", got)
	}
	if got := (&evaluator{}).cost(sts, 0, existing, nil); got != nil {
		t.Errorf("cost without prices = %+v, want nil", got)
	}
}

func TestPricesFromParams(t *testing.T) {
	p, err := PricesFromParams(map[string]any{"storage_class_prices": map[string]any{"fast": 0.17, "slow": 1}, "max_step_percent": 50})
	if err != nil || p.StorageClasses["fast"] != 0.17 || p.StorageClasses["slow"] != 1 || !p.configured() {
		t.Errorf("PricesFromParams = %+v, %v", p, err)
	}
	for _, bad := range []map[string]any{
		{"storage_class_prices": []any{1}},
		{"storage_class_prices": map[string]any{"fast": -1}},
		{"volume_attributes_class_prices": map[string]any{"gold": "x"}},
	} {
		if _, err := PricesFromParams(bad); err == nil {
			t.Errorf("PricesFromParams(%v) = nil error, want one", bad)
		}
	}
	if p, err := PricesFromParams(nil); err != nil || p.configured() {
		t.Errorf("PricesFromParams(nil) = %+v, %v; want no prices", p, err)
	}
}
