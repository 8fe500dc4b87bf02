package diff

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// compareClaim diffs one template against its claim; pvc is nil when the claim
// does not exist yet; ignore holds label keys never copied onto claims.
func compareClaim(t *corev1.PersistentVolumeClaim, name string, ordinal int32, pvc *corev1.PersistentVolumeClaim, ignore map[string]bool) ClaimChange {
	want := t.Spec.Resources.Requests[corev1.ResourceStorage]
	c := ClaimChange{
		Template:        t.Name,
		Ordinal:         ordinal,
		Name:            name,
		TemplateRequest: want.DeepCopy(),
		VACTo:           normVAC(t.Spec.VolumeAttributesClassName),
	}
	if pvc == nil {
		// The StatefulSet controller creates it from the template as it stands.
		c.Missing = true
		c.RequestTo = want.DeepCopy()
		c.Reasons = []string{"PVC not created yet"}
		return c
	}

	c.RequestFrom = pvc.Spec.Resources.Requests[corev1.ResourceStorage].DeepCopy()
	c.RequestTo = c.RequestFrom.DeepCopy()
	if c.RequestFrom.Cmp(want) < 0 {
		c.RequestTo = want.DeepCopy() // storage never shrinks
	}
	c.OverSized = c.RequestFrom.Cmp(want) > 0
	c.Capacity = pvc.Status.Capacity[corev1.ResourceStorage].DeepCopy()
	c.VACFrom = normVAC(pvc.Spec.VolumeAttributesClassName)
	c.CurrentVAC = normVAC(pvc.Status.CurrentVolumeAttributesClassName)
	c.Immutable = immutableMismatches(&t.Spec, &pvc.Spec)
	tmplVAC := c.VACTo
	if tmplVAC == nil || !classMatches(&t.Spec, &pvc.Spec) {
		// KEP-4650: a VAC belongs to a storage class; never move it across
		// classes. A template without a VAC leaves the claim's alone: the API
		// server forbids clearing a class once applied, so nil is no target.
		c.VACTo = c.VACFrom
	}
	c.Labels = missingEntries(t.Labels, pvc.Labels, ignore)
	c.Annotations = missingEntries(t.Annotations, pvc.Annotations, nil)
	c.ResizeError = resizeError(&pvc.Status)
	c.ModifyError = modifyError(&pvc.Status)

	for _, m := range c.Immutable {
		c.Reasons = append(c.Reasons, fmt.Sprintf("%s: PVC %s, template %s", fieldNoun[m.Field], m.Live, m.Desired))
	}
	if len(c.Labels) > 0 {
		c.Reasons = append(c.Reasons, "labels missing or different: "+sortedKeys(c.Labels))
	}
	if len(c.Annotations) > 0 {
		c.Reasons = append(c.Reasons, "annotations missing or different: "+sortedKeys(c.Annotations))
	}
	if c.Capacity.Cmp(want) < 0 {
		if c.Capacity.IsZero() {
			c.Reasons = append(c.Reasons, fmt.Sprintf("capacity not reported yet, template %s", want.String()))
		} else {
			c.Reasons = append(c.Reasons, fmt.Sprintf("capacity %s < template %s", c.Capacity.String(), want.String()))
		}
	}
	// Compatibility compares with the template's VAC, not VACTo: a claim in
	// another class keeps its VAC but is still not what the template asks for.
	if tmplVAC != nil && !equalPtr(c.CurrentVAC, tmplVAC) {
		c.Reasons = append(c.Reasons, fmt.Sprintf("current volume attributes class %s, template %s", renderClass(c.CurrentVAC), renderClass(tmplVAC)))
	}
	// Each unmet compatibility condition above added exactly one reason.
	c.Compatible = len(c.Reasons) == 0
	// Failures explain a claim that is not compatible; on a compatible claim
	// they are still carried in ResizeError/ModifyError, not in Reasons.
	if !c.Compatible && c.ResizeError != "" {
		c.Reasons = append(c.Reasons, "resize failed: "+c.ResizeError)
	}
	if !c.Compatible && c.ModifyError != "" {
		c.Reasons = append(c.Reasons, "volume attributes class change failed: "+c.ModifyError)
	}
	return c
}

// normVAC treats "" as unset (the API says both mean no class) and copies the
// value so that results never alias the caller's objects.
func normVAC(p *string) *string {
	if p == nil || *p == "" {
		return nil
	}
	v := *p
	return &v
}

func sortedKeys(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
