package diff

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// claimOptions are what every claim of a StatefulSet is compared with.
type claimOptions struct {
	// ignore holds label keys never copied onto claims.
	ignore map[string]bool
	// noVAC: the server serves no VolumeAttributesClasses.
	noVAC bool
}

// compareClaim diffs one template, of wantBytes, against its claim; pvc is
// nil when the claim does not exist yet. It fails on a claim whose sizes
// cannot be counted.
func compareClaim(t *corev1.PersistentVolumeClaim, wantBytes int64, name string, ordinal int32, pvc *corev1.PersistentVolumeClaim, opts claimOptions) (ClaimChange, error) {
	want := t.Spec.Resources.Requests[corev1.ResourceStorage]
	c := ClaimChange{
		Template:        t.Name,
		Ordinal:         ordinal,
		Name:            name,
		TemplateRequest: want.DeepCopy(),
		TemplateBytes:   wantBytes,
		VACTo:           normVAC(t.Spec.VolumeAttributesClassName),
	}
	if pvc == nil {
		// The StatefulSet controller creates it from the template as it stands.
		c.Missing = true
		c.RequestTo, c.ToBytes = want.DeepCopy(), wantBytes
		c.Reasons = []string{"PVC not created yet"}
		return c, nil
	}
	from, capacity, err := claimSizes(pvc)
	if err != nil {
		return ClaimChange{}, err
	}

	c.RequestFrom, c.FromBytes = pvc.Spec.Resources.Requests[corev1.ResourceStorage].DeepCopy(), from
	c.Capacity, c.CapacityBytes = pvc.Status.Capacity[corev1.ResourceStorage].DeepCopy(), capacity
	c.VACFrom = normVAC(pvc.Spec.VolumeAttributesClassName)
	c.CurrentVAC = normVAC(pvc.Status.CurrentVolumeAttributesClassName)
	c.Immutable = immutableMismatches(&t.Spec, &pvc.Spec)
	c.ResizeError = resizeError(&pvc.Status)
	c.ModifyError = modifyError(&pvc.Status)
	c.NodeResizePending = c.ResizeError == "" && nodeResizePending(&pvc.Status)
	c.Recovery = isRecovery(c, capacity, wantBytes)
	if c.Recovering, err = isRecovering(pvc, from, capacity); err != nil {
		return ClaimChange{}, err
	}
	c.RecoveredFrom = recoveredFrom(pvc)
	c.RequestTo, c.ToBytes = c.RequestFrom.DeepCopy(), from
	if from < wantBytes || c.Recovery {
		// Storage never shrinks: a recovery lowers only a request the
		// storage never reached, and never below the capacity.
		c.RequestTo, c.ToBytes = want.DeepCopy(), wantBytes
	}
	c.OverSized = from > wantBytes && !c.Recovery
	tmplVAC := targetVAC(&c, t, pvc, opts.noVAC)
	c.Labels = missingEntries(t.Labels, pvc.Labels, opts.ignore)
	c.Annotations = missingEntries(t.Annotations, pvc.Annotations, nil)

	for _, m := range c.Immutable {
		c.Reasons = append(c.Reasons, fmt.Sprintf("%s: PVC %s, template %s", fieldNoun[m.Field], m.Live, m.Desired))
	}
	if len(c.Labels) > 0 {
		c.Reasons = append(c.Reasons, "labels missing or different: "+sortedKeys(c.Labels))
	}
	if len(c.Annotations) > 0 {
		c.Reasons = append(c.Reasons, "annotations missing or different: "+sortedKeys(c.Annotations))
	}
	if capacity < wantBytes {
		if capacity == 0 {
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
	if !c.Compatible && c.NodeResizePending {
		c.Reasons = append(c.Reasons, "the volume is expanded; its file system grows when it is mounted again (FileSystemResizePending)")
	}
	if !c.Compatible && c.ModifyError != "" {
		c.Reasons = append(c.Reasons, "volume attributes class change failed: "+c.ModifyError)
	}
	return c, nil
}

// targetVAC sets what a patch sets as the claim's VolumeAttributesClass
// (c.VACTo) and returns the class the claim must be on to be compatible:
// the template's, or nil when it names none or the server cannot apply one.
func targetVAC(c *ClaimChange, t, pvc *corev1.PersistentVolumeClaim, noVAC bool) *string {
	tmplVAC := c.VACTo
	if tmplVAC == nil || !classMatches(&t.Spec, &pvc.Spec) {
		// KEP-4650: a VAC belongs to a storage class; never move it across
		// classes. A template without a VAC leaves the claim's alone: the API
		// server forbids clearing a class once applied, so nil is no target.
		c.VACTo = c.VACFrom
	}
	if noVAC && tmplVAC != nil {
		// The server would drop the field from the patch, and no claim
		// would ever report the class applied: waiting would be forever.
		c.VACTo = c.VACFrom
		if !equalPtr(c.CurrentVAC, tmplVAC) {
			c.VACUnsupported = tmplVAC
		}
		return nil
	}
	return tmplVAC
}

// claimSizes are a claim's storage request and capacity in bytes; a
// capacity not reported yet, or reported as zero, is 0. A tenant can create
// a claim of any size under the StatefulSet's claim names, so both are
// checked as strictly as a template.
func claimSizes(pvc *corev1.PersistentVolumeClaim) (request, capacity int64, err error) {
	request, err = Bytes(pvc.Spec.Resources.Requests[corev1.ResourceStorage])
	if err != nil {
		return 0, 0, fmt.Errorf("PersistentVolumeClaim %s/%s: spec.resources.requests.storage: %w", pvc.Namespace, pvc.Name, err)
	}
	if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok && !q.IsZero() {
		if capacity, err = Bytes(q); err != nil {
			return 0, 0, fmt.Errorf("PersistentVolumeClaim %s/%s: status.capacity.storage: %w", pvc.Namespace, pvc.Name, err)
		}
	}
	return request, capacity, nil
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
