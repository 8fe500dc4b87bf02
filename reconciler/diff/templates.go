package diff

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// LiveTemplatesOf returns live's templates for Input.LiveTemplates: never nil.
func LiveTemplatesOf(live *appsv1.StatefulSet) []corev1.PersistentVolumeClaim {
	if live.Spec.VolumeClaimTemplates == nil {
		return []corev1.PersistentVolumeClaim{}
	}
	return live.Spec.VolumeClaimTemplates
}

// templateChanges compares template names of the live and the desired StatefulSet.
func templateChanges(live, desired []corev1.PersistentVolumeClaim) (added, removed []string) {
	return namesNotIn(desired, live), namesNotIn(live, desired)
}

// namesNotIn returns the sorted names of a's templates that b lacks.
func namesNotIn(a, b []corev1.PersistentVolumeClaim) []string {
	inB := make(map[string]bool, len(b))
	for i := range b {
		inB[b[i].Name] = true
	}
	var out []string
	for i := range a {
		if !inB[a[i].Name] {
			out = append(out, a[i].Name)
		}
	}
	sort.Strings(out)
	return out
}

// templatesWithoutClaims infers added templates when the live StatefulSet is
// the desired one: a template none of whose claims exist, while another
// template's do, was added after the Pods were created.
func templatesWithoutClaims(ts []corev1.PersistentVolumeClaim, claims []ClaimChange) []string {
	exists := make(map[string]bool, len(ts))
	for i := range claims {
		if !claims[i].Missing {
			exists[claims[i].Template] = true
		}
	}
	if len(exists) == 0 {
		return nil // a new or scaled-to-zero StatefulSet, not an added template
	}
	var out []string
	for i := range ts {
		if !exists[ts[i].Name] {
			out = append(out, ts[i].Name)
		}
	}
	sort.Strings(out)
	return out
}

// orphanTemplates infers removed templates when the live StatefulSet is the
// desired one: PVCs selected by the StatefulSet and named like its claims,
// whose template part is no current template.
func orphanTemplates(sts *appsv1.StatefulSet, pvcs []corev1.PersistentVolumeClaim) ([]string, error) {
	// An empty selector would claim every PVC of the namespace; the API server
	// forbids it anyway, so such a StatefulSet owns none.
	if sel := sts.Spec.Selector; sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return nil, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("diff: StatefulSet %s: spec.selector: %w", objName(sts), err)
	}
	current := make(map[string]bool, len(sts.Spec.VolumeClaimTemplates))
	for i := range sts.Spec.VolumeClaimTemplates {
		current[sts.Spec.VolumeClaimTemplates[i].Name] = true
	}
	found := map[string]bool{}
	for i := range pvcs {
		p := &pvcs[i]
		if p.Namespace != sts.Namespace || !selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		if t, ok := TemplateOf(p.Name, sts.Name); ok && !current[t] {
			found[t] = true
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(found))
	for t := range found {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}
