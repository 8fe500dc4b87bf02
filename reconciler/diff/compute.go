package diff

import (
	"fmt"
	"math"

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
	start, count, err := Ordinals(sts, in.MaxClaims)
	if err != nil {
		return Result{}, err
	}
	sizes, err := validateTemplates(sts, "spec.volumeClaimTemplates", sts.Spec.VolumeClaimTemplates, true)
	if err != nil {
		return Result{}, err
	}
	if in.LiveTemplates != nil {
		if _, err := validateTemplates(sts, "live spec.volumeClaimTemplates", in.LiveTemplates, false); err != nil {
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

	opts := claimOptions{ignore: make(map[string]bool, len(in.IgnoreLabels)), noVAC: in.NoVolumeAttributesClasses}
	for _, k := range in.IgnoreLabels {
		opts.ignore[k] = true
	}
	claims := make([]ClaimChange, 0, len(sts.Spec.VolumeClaimTemplates)*int(count))
	for i := range sts.Spec.VolumeClaimTemplates {
		t := &sts.Spec.VolumeClaimTemplates[i]
		// Counting from zero: start+count can be one past math.MaxInt32.
		for k := range count {
			o := start + k
			name := ClaimName(t.Name, sts.Name, o)
			c, err := compareClaim(t, sizes[i], name, o, pvcs[name], opts)
			if err != nil {
				return Result{}, fmt.Errorf("diff: StatefulSet %s: %w", objName(sts), err)
			}
			claims = append(claims, c)
		}
	}

	res := Result{Claims: claims}
	if in.LiveTemplates != nil {
		res.TemplatesAdded, res.TemplatesRemoved = templateChanges(in.LiveTemplates, sts.Spec.VolumeClaimTemplates)
	} else {
		res.TemplatesAdded = templatesWithoutClaims(sts, pvcs)
		res.TemplatesRemoved, err = orphanTemplates(sts, in.PVCs)
		if err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// Ordinals returns the first ordinal and the replica count; nil replicas
// means 1, the API server's default. It refuses, naming the fields, a
// StatefulSet whose claims (templates × replicas) exceed maxClaims (below
// 1: DefaultMaxClaims), so that no caller loops over or allocates for
// billions of claims, and one whose last ordinal would be beyond
// math.MaxInt32.
func Ordinals(sts *appsv1.StatefulSet, maxClaims int) (start, count int32, err error) {
	if maxClaims < 1 {
		maxClaims = DefaultMaxClaims
	}
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
	if int64(start)+int64(count)-1 > math.MaxInt32 {
		return 0, 0, fmt.Errorf("diff: StatefulSet %s: spec.ordinals.start %d + spec.replicas %d - 1 is beyond the largest ordinal, %d", objName(sts), start, count, math.MaxInt32)
	}
	if n := int64(len(sts.Spec.VolumeClaimTemplates)) * int64(count); n > int64(maxClaims) {
		return 0, 0, fmt.Errorf("diff: StatefulSet %s: spec.replicas %d × %d volumeClaimTemplates is %d claims, more than the limit of %d claims per StatefulSet (maxClaimsPerStatefulSet)",
			objName(sts), count, len(sts.Spec.VolumeClaimTemplates), n, maxClaims)
	}
	return start, count, nil
}

// validateTemplates rejects templates the diff cannot name or size, and
// returns each template's storage request in bytes. Live templates only
// contribute names, so their storage request is not read.
func validateTemplates(sts *appsv1.StatefulSet, field string, ts []corev1.PersistentVolumeClaim, needStorage bool) ([]int64, error) {
	seen := make(map[string]bool, len(ts))
	sizes := make([]int64, len(ts))
	for i := range ts {
		t := &ts[i]
		if t.Name == "" {
			return nil, fmt.Errorf("diff: StatefulSet %s: %s[%d]: metadata.name is empty", objName(sts), field, i)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("diff: StatefulSet %s: %s[%d]: duplicate name %q", objName(sts), field, i, t.Name)
		}
		seen[t.Name] = true
		if !needStorage {
			continue
		}
		q, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]
		if !ok {
			return nil, fmt.Errorf("diff: StatefulSet %s: %s[%d] (%s): spec.resources.requests.storage is not set", objName(sts), field, i, t.Name)
		}
		b, err := Bytes(q)
		if err != nil {
			return nil, fmt.Errorf("diff: StatefulSet %s: %s[%d] (%s): spec.resources.requests.storage: %w", objName(sts), field, i, t.Name, err)
		}
		sizes[i] = b
	}
	return sizes, nil
}

func objName(sts *appsv1.StatefulSet) string {
	return sts.Namespace + "/" + sts.Name
}
