package check

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/claimwarden/claimwarden/integrations/manifests"
)

// proposedFacts says where the proposal's own cluster objects differ from
// the current state: asking the policies a second time is needed only there.
type proposedFacts struct {
	// classes: a StorageClass differs, which any claim may read.
	classes bool
	// namespaces: the Namespace or a ResourceQuota of these namespaces differs.
	namespaces map[string]bool
}

// withProposed is the current state as the proposal's own StorageClasses,
// Namespaces and ResourceQuotas would make it once applied, sharing c's
// StatefulSets and claims, and where it differs from c; c itself when the
// proposal changes none. The policies are asked under both where they
// differ, and a denial under either stands: a pull request can add a
// denial with its objects (a lower quota), never lift one (a class that
// now allows expansion, a higher quota, a relabelled Namespace) before they
// are live. c's quotas must be counted already.
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
	p.proposed = c.differences(&p)
	if !p.proposed.classes && len(p.proposed.namespaces) == 0 {
		return c, nil
	}
	return &p, nil
}

// differences are where after's StorageClasses, Namespaces and quotas are
// not c's.
func (c *current) differences(after *current) *proposedFacts {
	d := &proposedFacts{namespaces: map[string]bool{}}
	d.classes = !equality.Semantic.DeepEqual(c.storageClasses, after.storageClasses)
	for name, ns := range after.namespaces {
		if !equality.Semantic.DeepEqual(c.namespaces[name], ns) {
			d.namespaces[name] = true
		}
	}
	for ns, qs := range after.quotas {
		if !equality.Semantic.DeepEqual(c.quotas[ns], qs) {
			d.namespaces[ns] = true
		}
	}
	return d
}

// asksAgain reports whether the policies must be asked under c as well as
// the current state for a StatefulSet of namespace ns.
func (c *current) asksAgain(ns string) bool {
	return c.proposed != nil && (c.proposed.classes || c.proposed.namespaces[ns])
}

func hasClusterObjects(objs []manifests.Object) bool {
	for _, o := range objs {
		if clusterTarget(o) != nil {
			return true
		}
	}
	return false
}
