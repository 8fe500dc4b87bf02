package diff

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fieldNoun names a Field in Reasons.
var fieldNoun = map[Field]string{
	FieldStorageClass: "storage class",
	FieldAccessModes:  "access modes",
	FieldVolumeMode:   "volume mode",
	FieldSelector:     "selector",
	FieldDataSource:   "data source",
}

// immutableMismatches compares the fields a PVC patch can never change, after
// undoing what the API server defaults or mirrors on the way in.
func immutableMismatches(tmpl, live *corev1.PersistentVolumeClaimSpec) []Mismatch {
	var out []Mismatch
	add := func(f Field, live, desired string) {
		if live != desired {
			out = append(out, Mismatch{Field: f, Live: live, Desired: desired})
		}
	}
	if !classMatches(tmpl, live) {
		add(FieldStorageClass, renderClass(live.StorageClassName), renderClass(tmpl.StorageClassName))
	}
	if !sameModes(live.AccessModes, tmpl.AccessModes) {
		add(FieldAccessModes, renderAccessModes(live.AccessModes), renderAccessModes(tmpl.AccessModes))
	}
	add(FieldVolumeMode, renderVolumeMode(live.VolumeMode), renderVolumeMode(tmpl.VolumeMode))
	add(FieldSelector, renderSelector(live.Selector), renderSelector(tmpl.Selector))
	add(FieldDataSource, renderDataSource(live), renderDataSource(tmpl))
	return out
}

// classMatches: a template without a class matches any PVC class, because the
// DefaultStorageClass admission plugin filled the PVC's in at creation.
func classMatches(tmpl, live *corev1.PersistentVolumeClaimSpec) bool {
	if tmpl.StorageClassName == nil {
		return true
	}
	return live.StorageClassName != nil && *live.StorageClassName == *tmpl.StorageClassName
}

// renderClass quotes a class name so that "" (no class) stays visible.
func renderClass(p *string) string {
	if p == nil {
		return "(unset)"
	}
	return strconv.Quote(*p)
}

// sameModes compares access modes as sets: order and repeats carry no meaning.
// There are at most a handful of modes, so the quadratic scan is the cheap one.
func sameModes(a, b []corev1.PersistentVolumeAccessMode) bool {
	return subset(a, b) && subset(b, a)
}

func subset(a, b []corev1.PersistentVolumeAccessMode) bool {
	for _, m := range a {
		if !slices.Contains(b, m) {
			return false
		}
	}
	return true
}

// renderAccessModes renders the modes as a sorted set.
func renderAccessModes(modes []corev1.PersistentVolumeAccessMode) string {
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = string(m)
	}
	sort.Strings(s)
	return "[" + strings.Join(slices.Compact(s), ", ") + "]"
}

func renderVolumeMode(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return string(corev1.PersistentVolumeFilesystem) // the API default
	}
	return string(*m)
}

// renderSelector renders a selector canonically (sorted terms and values), so
// that nil and empty selectors, and reordered terms, compare equal.
func renderSelector(sel *metav1.LabelSelector) string {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return "(none)"
	}
	terms := make([]string, 0, len(sel.MatchLabels)+len(sel.MatchExpressions))
	for k, v := range sel.MatchLabels {
		terms = append(terms, k+"="+v)
	}
	for _, e := range sel.MatchExpressions {
		vals := append([]string(nil), e.Values...)
		sort.Strings(vals)
		t := e.Key + " " + string(e.Operator)
		if len(vals) > 0 {
			t += " (" + strings.Join(vals, ",") + ")"
		}
		terms = append(terms, t)
	}
	sort.Strings(terms)
	return strings.Join(terms, ", ")
}

// renderDataSource renders the effective source: the API server mirrors
// dataSource into dataSourceRef, so a template may set either one.
func renderDataSource(spec *corev1.PersistentVolumeClaimSpec) string {
	var group, ns, kind, name string
	switch {
	case spec.DataSourceRef != nil:
		r := spec.DataSourceRef
		kind, name = r.Kind, r.Name
		if r.APIGroup != nil {
			group = *r.APIGroup
		}
		if r.Namespace != nil {
			ns = *r.Namespace
		}
	case spec.DataSource != nil:
		r := spec.DataSource
		kind, name = r.Kind, r.Name
		if r.APIGroup != nil {
			group = *r.APIGroup
		}
	default:
		return "(none)"
	}
	if group != "" {
		kind += "." + group
	}
	if ns != "" {
		name = ns + "/" + name
	}
	return kind + " " + name
}
