package diff

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Where the server serves no VolumeAttributesClasses a template's class is
// neither patched nor waited for: the claim is compatible once its size is,
// and says which class it is not on.
func TestNoVolumeAttributesClassesReportsTheClassNotApplied(t *testing.T) {
	sts := statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "30Gi", class("standard"), vac("gold"))})
	for _, tc := range []struct {
		name        string
		pvc         corev1.PersistentVolumeClaim
		compatible  bool
		unsupported string
	}{
		{"growing, class not applied", pvc("data-web-0", "20Gi", "20Gi"), false, "gold"},
		{"grown, class not applied", pvc("data-web-0", "30Gi", "30Gi"), true, "gold"},
		{"already on the class", pvc("data-web-0", "30Gi", "30Gi", vac("gold"), currentVAC("gold")), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compute(Input{Desired: sts, PVCs: []corev1.PersistentVolumeClaim{tc.pvc}, NoVolumeAttributesClasses: true})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Claims[0]
			if c.Compatible != tc.compatible {
				t.Errorf("compatible %v, want %v (reasons %q)", c.Compatible, tc.compatible, c.Reasons)
			}
			if got := deref(c.VACUnsupported); got != tc.unsupported {
				t.Errorf("VACUnsupported %q, want %q", got, tc.unsupported)
			}
			if deref(c.VACTo) != deref(c.VACFrom) {
				t.Errorf("VACTo %q, want the claim's own %q: a patch must not carry a class the server drops", deref(c.VACTo), deref(c.VACFrom))
			}
		})
	}

	// The same claim on a server with classes waits for the class.
	res, err := Compute(Input{Desired: sts, PVCs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "30Gi", "30Gi")}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Claims[0]; c.Compatible || c.VACUnsupported != nil || deref(c.VACTo) != "gold" {
		t.Errorf("with classes: compatible %v, unsupported %v, to %q; want waiting for gold", c.Compatible, c.VACUnsupported, deref(c.VACTo))
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
