package check

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/claimwarden/claimwarden/reconciler/gate"
)

// countQuotaUse fills in what is used of every quota that does not say
// (one from manifests: only the cluster's quota controller writes
// status.used), counting the namespace's current claims as that controller
// does: their storage requests and their number, in all and per class.
func (c *current) countQuotaUse() error {
	for _, ns := range slices.Sorted(maps.Keys(c.quotas)) {
		var uncounted []*corev1.ResourceQuota
		for _, q := range c.quotas[ns] {
			if q.Status.Used == nil {
				uncounted = append(uncounted, q)
			}
		}
		if len(uncounted) == 0 {
			continue
		}
		used, err := c.claimUse(ns)
		if err != nil {
			return err
		}
		for _, q := range uncounted {
			q.Status.Used = corev1.ResourceList{}
			for name := range q.Spec.Hard {
				if v, ok := used[name]; ok {
					q.Status.Used[name] = v
				}
			}
		}
	}
	return nil
}

// claimUse sums the current claims of namespace ns by quota resource.
func (c *current) claimUse(ns string) (corev1.ResourceList, error) {
	used := corev1.ResourceList{}
	add := func(name corev1.ResourceName, q resource.Quantity) {
		sum := used[name]
		sum.Add(q)
		used[name] = sum
	}
	one := resource.MustParse("1")
	owners := map[string]*appsv1.StatefulSet{}
	for _, cl := range c.claims[ns] {
		pvc, err := c.pvc(cl, owners)
		if err != nil {
			return nil, err
		}
		request := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		add(corev1.ResourceRequestsStorage, request)
		add(corev1.ResourcePersistentVolumeClaims, one)
		if class := pvc.Spec.StorageClassName; class != nil && *class != "" {
			add(gate.ClassQuotaResource(*class, corev1.ResourceRequestsStorage), request)
			add(gate.ClassQuotaResource(*class, corev1.ResourcePersistentVolumeClaims), one)
		}
	}
	return used, nil
}
