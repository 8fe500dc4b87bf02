package gate

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/policies"
)

// classQuotaSuffix joins a StorageClass's name and a resource in the
// per-class quota resources, e.g. standard.storageclass.storage.k8s.io/requests.storage.
const classQuotaSuffix = ".storageclass.storage.k8s.io/"

// QuotasForPolicies reduces quotas to what a claim counts against
// (policies.ResourceQuota), sorted by name; quotas that limit none of it
// are left out, and nil is returned when none is left. The controller also
// compares two reductions to tell whether a quota's change matters.
func QuotasForPolicies(quotas []corev1.ResourceQuota) []policies.ResourceQuota {
	var out []policies.ResourceQuota
	for i := range quotas {
		q := &quotas[i]
		resources := map[string]policies.QuotaAmount{}
		for name, hard := range q.Spec.Hard {
			if !countsClaims(name) {
				continue
			}
			a := policies.QuotaAmount{Hard: hard.String(), HardValue: hard.Value()}
			if used, ok := q.Status.Used[name]; ok {
				a.Used, a.UsedValue = used.String(), used.Value()
			}
			resources[string(name)] = a
		}
		if len(resources) == 0 {
			continue
		}
		scoped := len(q.Spec.Scopes) > 0 || (q.Spec.ScopeSelector != nil && len(q.Spec.ScopeSelector.MatchExpressions) > 0)
		out = append(out, policies.ResourceQuota{Name: q.Name, Scoped: scoped, Resources: resources})
	}
	slices.SortFunc(out, func(a, b policies.ResourceQuota) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// ClassQuotaResource is the quota resource that counts r (requests.storage,
// persistentvolumeclaims) for the claims of one StorageClass.
func ClassQuotaResource(class string, r corev1.ResourceName) corev1.ResourceName {
	return corev1.ResourceName(class + classQuotaSuffix + string(r))
}

// countsClaims reports whether a quota resource is one a claim counts
// against: its request, itself, or either for its class.
func countsClaims(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceRequestsStorage, corev1.ResourcePersistentVolumeClaims:
		return true
	}
	class, resource, ok := strings.Cut(string(name), classQuotaSuffix)
	return ok && class != "" &&
		(resource == string(corev1.ResourceRequestsStorage) || resource == string(corev1.ResourcePersistentVolumeClaims))
}
