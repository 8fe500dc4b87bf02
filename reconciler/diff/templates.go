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
// the desired one: a template is added when a Pod runs without its claim.
// The StatefulSet controller creates every template's claim of an ordinal,
// one after the other, before that ordinal's Pod, and creates the Pod only
// once they all exist (StatefulPodControl.CreateStatefulPod); so a claim
// missing where no Pod exists yet is one still being created — the cache
// can hold a new StatefulSet's first claim without its second — while one
// missing beside a Pod belongs to a template the Pod predates. Pods are not
// read: the status counts them (podsWithClaims), and a template whose
// claims are at fewer ordinals than that count lacks one beside a Pod.
// Claims of every ordinal count, those a scale-down or a new
// spec.ordinals.start leaves outside the replicas too, since the Pods
// counted may be theirs.
func templatesWithoutClaims(sts *appsv1.StatefulSet, pvcs map[string]*corev1.PersistentVolumeClaim) []string {
	pods := podsWithClaims(sts)
	if pods == 0 {
		return nil // a new or scaled-to-zero StatefulSet, not an added template
	}
	ordinals := make(map[string]int64, len(sts.Spec.VolumeClaimTemplates))
	for name := range pvcs {
		// One PVC per name: each counts one ordinal of its template.
		if t, ok := TemplateOf(name, sts.Name); ok {
			ordinals[t]++
		}
	}
	var out []string
	for i := range sts.Spec.VolumeClaimTemplates {
		if t := sts.Spec.VolumeClaimTemplates[i].Name; ordinals[t] < pods {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// podsWithClaims is how many ordinals of sts, at least, have a Pod and so
// all their claims, by its status: the Pods the StatefulSet controller
// counted at its last sync, bar those being deleted (currentReplicas, plus
// updatedReplicas while a rolling update is under way: each counts the Pods
// of one revision), at most spec.replicas. The Pods left out may be going
// with their claims: persistentVolumeClaimRetentionPolicy whenScaled: Delete
// deletes those of the Pods beyond spec.replicas once they are gone. A
// status that lags behind counts Pods that were created, after their
// claims: it starts at zero on a new or re-created StatefulSet.
func podsWithClaims(sts *appsv1.StatefulSet) int64 {
	st := &sts.Status
	n := int64(st.CurrentReplicas)
	if st.UpdateRevision != st.CurrentRevision {
		n += int64(st.UpdatedReplicas)
	}
	replicas := int64(1)
	if r := sts.Spec.Replicas; r != nil {
		replicas = int64(*r)
	}
	return min(n, replicas)
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
