package diff

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// TemplatesEqual reports whether two lists of volumeClaimTemplates are the
// same as the API server sees them: a manifest from Git leaves out what the
// server fills in on a live StatefulSet (kind and apiVersion of each
// template, volumeMode Filesystem, status phase Pending), so those are
// normalised away before comparing. Quantities compare by value, exactly,
// as the API server does when it refuses a change of templates. A list
// holding a quantity of a huge exponent is equal to none: comparing it
// exactly would take minutes, and the diff refuses it anyway.
func TemplatesEqual(a, b []corev1.PersistentVolumeClaim) bool {
	if len(a) != len(b) || !ordinaryQuantities(a) || !ordinaryQuantities(b) {
		return false
	}
	for i := range a {
		if !equality.Semantic.DeepEqual(normalTemplate(&a[i]), normalTemplate(&b[i])) {
			return false
		}
	}
	return true
}

// NormalTemplates are ts as TemplatesEqual compares them: what a user can
// set, server defaults applied, status and type meta dropped. Templates
// equal by TemplatesEqual encode alike, so they hash alike.
func NormalTemplates(ts []corev1.PersistentVolumeClaim) []corev1.PersistentVolumeClaim {
	out := make([]corev1.PersistentVolumeClaim, len(ts))
	for i := range ts {
		out[i] = normalTemplate(&ts[i])
	}
	return out
}

// normalTemplate keeps what a user can set on a template, server defaults applied.
func normalTemplate(t *corev1.PersistentVolumeClaim) corev1.PersistentVolumeClaim {
	out := corev1.PersistentVolumeClaim{Spec: *t.Spec.DeepCopy()}
	out.Name = t.Name
	out.Labels = nonEmpty(t.Labels)
	out.Annotations = nonEmpty(t.Annotations)
	if out.Spec.VolumeMode == nil {
		fs := corev1.PersistentVolumeFilesystem
		out.Spec.VolumeMode = &fs
	}
	return out
}

// ordinaryQuantities reports whether every request and limit of ts is
// below 2^64 in magnitude, where exact comparisons are cheap.
func ordinaryQuantities(ts []corev1.PersistentVolumeClaim) bool {
	for i := range ts {
		for _, l := range []corev1.ResourceList{ts[i].Spec.Resources.Requests, ts[i].Spec.Resources.Limits} {
			for _, q := range l {
				if !ordinary(q.AsApproximateFloat64()) {
					return false
				}
			}
		}
	}
	return true
}

func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
