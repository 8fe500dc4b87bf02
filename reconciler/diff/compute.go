package diff

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Compute diffs every claim (template × ordinal) of in.Desired against the
// namespace's PVCs. Claims come in template order, then ordinal order, so that
// callers and status output are deterministic. It returns an error, naming the
// object and field, when the input cannot describe a StatefulSet.
func Compute(in Input) (Result, error) {
	sts := in.Desired
	if sts == nil {
		return Result{}, fmt.Errorf("diff: Input.Desired is nil")
	}
	start, count, err := ordinals(sts)
	if err != nil {
		return Result{}, err
	}
	if err := validateTemplates(sts, "spec.volumeClaimTemplates", sts.Spec.VolumeClaimTemplates, true); err != nil {
		return Result{}, err
	}
	if in.LiveTemplates != nil {
		if err := validateTemplates(sts, "live spec.volumeClaimTemplates", in.LiveTemplates, false); err != nil {
			return Result{}, err
		}
	}

	pvcs := make(map[string]*corev1.PersistentVolumeClaim, len(in.PVCs))
	for i := range in.PVCs {
		p := &in.PVCs[i]
		if p.Namespace != sts.Namespace {
			continue
		}
		// The API server cannot hold two PVCs of one name; keep the first.
		if _, dup := pvcs[p.Name]; !dup {
			pvcs[p.Name] = p
		}
	}

	ignore := make(map[string]bool, len(in.IgnoreLabels))
	for _, k := range in.IgnoreLabels {
		ignore[k] = true
	}
	claims := make([]ClaimChange, 0, len(sts.Spec.VolumeClaimTemplates)*int(count))
	for i := range sts.Spec.VolumeClaimTemplates {
		t := &sts.Spec.VolumeClaimTemplates[i]
		for o := start; o < start+count; o++ {
			name := ClaimName(t.Name, sts.Name, o)
			claims = append(claims, compareClaim(t, name, o, pvcs[name], ignore))
		}
	}

	res := Result{Claims: claims}
	if in.LiveTemplates != nil {
		res.TemplatesAdded, res.TemplatesRemoved = templateChanges(in.LiveTemplates, sts.Spec.VolumeClaimTemplates)
	} else {
		res.TemplatesAdded = templatesWithoutClaims(sts.Spec.VolumeClaimTemplates, claims)
		res.TemplatesRemoved, err = orphanTemplates(sts, in.PVCs)
		if err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// ClaimName is the name the StatefulSet controller gives a template's claim.
func ClaimName(template, statefulSet string, ordinal int32) string {
	return template + "-" + statefulSet + "-" + strconv.FormatInt(int64(ordinal), 10)
}

// ordinals returns the first ordinal and the replica count; nil replicas means 1,
// the API server's default.
func ordinals(sts *appsv1.StatefulSet) (start, count int32, err error) {
	count = 1
	if r := sts.Spec.Replicas; r != nil {
		count = *r
	}
	if count < 0 {
		return 0, 0, fmt.Errorf("diff: StatefulSet %s: spec.replicas is %d, must not be negative", objName(sts), count)
	}
	if o := sts.Spec.Ordinals; o != nil {
		start = o.Start
	}
	if start < 0 {
		return 0, 0, fmt.Errorf("diff: StatefulSet %s: spec.ordinals.start is %d, must not be negative", objName(sts), start)
	}
	return start, count, nil
}

// validateTemplates rejects templates the diff cannot name or size. Live
// templates only contribute names, so their storage request is not required.
func validateTemplates(sts *appsv1.StatefulSet, field string, ts []corev1.PersistentVolumeClaim, needStorage bool) error {
	seen := make(map[string]bool, len(ts))
	for i := range ts {
		t := &ts[i]
		if t.Name == "" {
			return fmt.Errorf("diff: StatefulSet %s: %s[%d]: metadata.name is empty", objName(sts), field, i)
		}
		if seen[t.Name] {
			return fmt.Errorf("diff: StatefulSet %s: %s[%d]: duplicate name %q", objName(sts), field, i, t.Name)
		}
		seen[t.Name] = true
		if _, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]; needStorage && !ok {
			return fmt.Errorf("diff: StatefulSet %s: %s[%d] (%s): spec.resources.requests.storage is not set", objName(sts), field, i, t.Name)
		}
	}
	return nil
}

func objName(sts *appsv1.StatefulSet) string {
	return sts.Namespace + "/" + sts.Name
}
