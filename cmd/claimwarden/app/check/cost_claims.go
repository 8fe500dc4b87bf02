package check

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// cost prices the claims of a proposed StatefulSet before and after it is
// applied: the existing claims at their request, then at the template's
// where changes has them, plus the claims the StatefulSet controller will
// create for the proposed replicas from first. Nil when no price is
// configured or nothing changes. The classes are those the max-cost-increase
// policy reads: the PVC's, the template's when it names one.
func (e *evaluator) cost(proposed *appsv1.StatefulSet, first int32, existing []corev1.PersistentVolumeClaim, changes []diff.ClaimChange) *Cost {
	if !e.prices.configured() {
		return nil
	}
	changed := make(map[string]diff.ClaimChange, len(changes))
	for _, c := range changes {
		if !c.Missing {
			changed[c.Name] = c
		}
	}
	templates := make(map[string]*corev1.PersistentVolumeClaim, len(proposed.Spec.VolumeClaimTemplates))
	for i := range proposed.Spec.VolumeClaimTemplates {
		templates[proposed.Spec.VolumeClaimTemplates[i].Name] = &proposed.Spec.VolumeClaimTemplates[i]
	}
	before := make([]pricedClaim, 0, len(existing))
	after := make([]pricedClaim, 0, len(existing))
	exists := make(map[string]bool, len(existing))
	for i := range existing {
		pvc := &existing[i]
		exists[pvc.Name] = true
		now := pricedClaim{bytes: pvc.Spec.Resources.Requests.Storage().Value(), class: deref(pvc.Spec.StorageClassName), vac: deref(pvc.Spec.VolumeAttributesClassName)}
		before = append(before, now)
		if c, ok := changed[pvc.Name]; ok {
			now.bytes, now.vac = c.TemplateBytes, deref(c.VACFrom)
			if c.VACTo != nil {
				now.vac = *c.VACTo
			}
			if t := templates[c.Template]; t != nil && deref(t.Spec.StorageClassName) != "" {
				now.class = *t.Spec.StorageClassName
			}
		}
		after = append(after, now)
	}
	for _, t := range proposed.Spec.VolumeClaimTemplates {
		class := deref(t.Spec.StorageClassName)
		if class == "" {
			class = e.defaultClass
		}
		for o := int64(first); o < int64(first)+int64(replicasOf(proposed)); o++ {
			if !exists[diff.ClaimName(t.Name, proposed.Name, int32(o))] {
				after = append(after, pricedClaim{bytes: t.Spec.Resources.Requests.Storage().Value(), class: class, vac: deref(t.Spec.VolumeAttributesClassName)})
			}
		}
	}
	return e.prices.costOf(before, after)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
