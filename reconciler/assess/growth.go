package assess

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// Growth is what a proposal adds to what quotas count, by quota resource
// (see policies.Proposal).
type Growth map[string]int64

// growthOf sums what the proposal's claims still have to grow: a patch
// that raises a request, and a claim the StatefulSet controller creates
// from its template.
func growthOf(res diff.Result, claims map[string]*corev1.PersistentVolumeClaim, desired *appsv1.StatefulSet) Growth {
	g := Growth{}
	for _, c := range res.Claims {
		switch {
		case c.Missing:
			var class string
			if t := plan.TemplateNamed(desired, c.Template); t != nil && t.Spec.StorageClassName != nil {
				class = *t.Spec.StorageClassName
			}
			g.add(class, corev1.ResourceRequestsStorage, c.TemplateBytes)
			g.add(class, corev1.ResourcePersistentVolumeClaims, 1)
		case c.NeedsPatch() && c.ToBytes > c.FromBytes:
			var class string
			if pvc := claims[c.Name]; pvc != nil && pvc.Spec.StorageClassName != nil {
				class = *pvc.Spec.StorageClassName
			}
			g.add(class, corev1.ResourceRequestsStorage, c.ToBytes-c.FromBytes)
		}
	}
	return g
}

// add counts n of resource r in all and, when class is set, for the class.
func (g Growth) add(class string, r corev1.ResourceName, n int64) {
	g[string(r)] += n
	if class != "" {
		g[string(gate.ClassQuotaResource(class, r))] += n
	}
}

// Add adds o to g.
func (g Growth) Add(o Growth) {
	for r, n := range o {
		g[r] += n
	}
}

// claimsGrowing counts the claims that grow or are created.
func claimsGrowing(res diff.Result) int {
	n := 0
	for _, c := range res.Claims {
		if c.Missing || (c.NeedsPatch() && c.ToBytes > c.FromBytes) {
			n++
		}
	}
	return n
}

// totals are the policies' view of g, beside inFlight.
func (g Growth) totals(res diff.Result, inFlight Growth) *policies.Proposal {
	p := &policies.Proposal{Growth: map[string]int64(g), InFlight: map[string]int64(inFlight), Claims: claimsGrowing(res)}
	if p.InFlight == nil {
		p.InFlight = map[string]int64{}
	}
	return p
}

// GrowthOf is what the proposal of in still has to grow, without asking
// the policies: a caller that assesses several proposals of a namespace
// together sums them first, to give each the others' as Input.InFlight.
func GrowthOf(in Input) (Growth, error) {
	res, err := compare(in)
	if err != nil {
		return nil, &InvalidTemplates{err}
	}
	return growthOf(res, byName(in.Claims), in.Desired), nil
}
