package gate

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/policies"
)

func quota(name string, hard, used corev1.ResourceList) corev1.ResourceQuota {
	return corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		Status:     corev1.ResourceQuotaStatus{Hard: hard, Used: used},
	}
}

func TestQuotasForPoliciesKeepsWhatClaimsCountAgainst(t *testing.T) {
	q := resource.MustParse
	compute := quota("compute", corev1.ResourceList{"cpu": q("4"), "pods": q("10")}, corev1.ResourceList{"cpu": q("1")})
	storage := quota("storage", corev1.ResourceList{
		"requests.storage":                                        q("20Gi"),
		"persistentvolumeclaims":                                  q("10"),
		"fast.storageclass.storage.k8s.io/requests.storage":       q("5Gi"),
		"fast.storageclass.storage.k8s.io/persistentvolumeclaims": q("2"),
		".storageclass.storage.k8s.io/requests.storage":           q("1Gi"),
		"fast.storageclass.storage.k8s.io/limits.storage":         q("1Gi"),
		"cpu": q("4"),
	}, corev1.ResourceList{"requests.storage": q("10737418239.5"), "persistentvolumeclaims": q("3"), "cpu": q("1")})
	scoped := quota("by-attributes", corev1.ResourceList{"requests.storage": q("1Gi")}, nil)
	scoped.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
		ScopeName: corev1.ResourceQuotaScopeVolumeAttributesClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"gold"},
	}}}

	got := QuotasForPolicies([]corev1.ResourceQuota{storage, compute, scoped})
	want := []policies.ResourceQuota{
		{Name: "by-attributes", Scoped: true, Resources: map[string]policies.QuotaAmount{
			"requests.storage": {Hard: "1Gi", HardValue: 1 << 30},
		}},
		{Name: "storage", Resources: map[string]policies.QuotaAmount{
			"requests.storage":                                        {Hard: "20Gi", Used: "10737418239500m", HardValue: 20 << 30, UsedValue: 10 << 30},
			"persistentvolumeclaims":                                  {Hard: "10", Used: "3", HardValue: 10, UsedValue: 3},
			"fast.storageclass.storage.k8s.io/requests.storage":       {Hard: "5Gi", HardValue: 5 << 30},
			"fast.storageclass.storage.k8s.io/persistentvolumeclaims": {Hard: "2", HardValue: 2},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got := QuotasForPolicies([]corev1.ResourceQuota{compute}); got != nil {
		t.Errorf("a compute quota alone: got %+v, want nil (no quota a claim counts against)", got)
	}
}
