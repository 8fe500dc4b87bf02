package check

import (
	"maps"

	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/integrations/manifests"
)

// withProposed is the current state as the proposal's own StorageClasses,
// Namespaces and ResourceQuotas would make it once applied, sharing c's
// StatefulSets and claims; c itself when the proposal has none. The
// policies are asked under both, and a denial under either stands: a pull
// request can add a denial with its objects (a lower quota), never lift
// one (a class that now allows expansion, a higher quota, a relabelled
// Namespace) before they are live. c's quotas must be counted already.
func (c *current) withProposed(objs []manifests.Object) (*current, error) {
	if !hasClusterObjects(objs) {
		return c, nil
	}
	p := *c
	p.storageClasses = maps.Clone(c.storageClasses)
	p.namespaces = maps.Clone(c.namespaces)
	p.quotas = make(map[string]map[string]*corev1.ResourceQuota, len(c.quotas))
	for ns, qs := range c.quotas {
		p.quotas[ns] = maps.Clone(qs)
	}
	if err := p.addClusterObjects(objs); err != nil {
		return nil, err
	}
	if err := p.countQuotaUse(); err != nil {
		return nil, err
	}
	return &p, nil
}

func hasClusterObjects(objs []manifests.Object) bool {
	for _, o := range objs {
		if clusterTarget(o) != nil {
			return true
		}
	}
	return false
}
