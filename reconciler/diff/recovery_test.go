package diff

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

func failed(msg string) mut {
	return condition(corev1.PersistentVolumeClaimControllerResizeError, corev1.ConditionTrue, msg)
}

func allocatedSize(size string) mut {
	return func(p *corev1.PersistentVolumeClaim) {
		p.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	}
}

func recoveredAnnotation(v string) mut {
	return withAnnotations(v1alpha1.RecoveredFromAnnotation, v)
}

// A failed expansion is undone by lowering the request only where the API
// server allows it (above status.capacity) and only when the expansion
// failed; every other smaller template leaves the request alone.
func TestComputeRecovery(t *testing.T) {
	type want struct {
		recovery, recovering, overSized, needsPatch bool
		to, recoveredFrom                           string
	}
	cases := []struct {
		name     string
		template string
		pvc      corev1.PersistentVolumeClaim
		want     want
	}{{
		name:     "failed expansion, template between capacity and request: recovery",
		template: "2Gi",
		pvc:      pvc("data-web-0", "10Gi", "1Gi", failed("out of space"), allocatedSize("10Gi")),
		want:     want{recovery: true, needsPatch: true, to: "2Gi"},
	}, {
		name:     "infeasible status without a condition counts as failed",
		template: "2Gi",
		pvc:      pvc("data-web-0", "10Gi", "1Gi", allocated(corev1.PersistentVolumeClaimControllerResizeInfeasible)),
		want:     want{recovery: true, needsPatch: true, to: "2Gi"},
	}, {
		name:     "no failure: a smaller template is a shrink, never applied",
		template: "2Gi",
		pvc:      pvc("data-web-0", "10Gi", "1Gi", allocated(corev1.PersistentVolumeClaimControllerResizeInProgress)),
		want:     want{overSized: true, to: "10Gi"},
	}, {
		name:     "failed, template at the capacity: the API server refuses it",
		template: "1Gi",
		pvc:      pvc("data-web-0", "10Gi", "1Gi", failed("out of space")),
		want:     want{overSized: true, to: "10Gi"},
	}, {
		name:     "failed, template below the capacity: a shrink",
		template: "512Mi",
		pvc:      pvc("data-web-0", "10Gi", "1Gi", failed("out of space")),
		want:     want{overSized: true, to: "10Gi"},
	}, {
		name:     "failed, capacity unknown: nothing to compare with",
		template: "2Gi",
		pvc:      pvc("data-web-0", "10Gi", "", failed("out of space")),
		want:     want{overSized: true, to: "10Gi"},
	}, {
		name:     "failed, template larger than the request: plain growth",
		template: "20Gi",
		pvc:      pvc("data-web-0", "10Gi", "1Gi", failed("out of space")),
		want:     want{needsPatch: true, to: "20Gi"},
	}, {
		name:     "failed, another storage class: never patched",
		template: "2Gi",
		pvc:      pvc("data-web-0", "10Gi", "1Gi", failed("out of space"), class("other")),
		want:     want{overSized: true, to: "10Gi"},
	}, {
		name:     "request lowered below allocatedResources: recovering, stale failure",
		template: "2Gi",
		pvc:      pvc("data-web-0", "2Gi", "1Gi", failed("out of space"), allocatedSize("10Gi"), recoveredAnnotation("10Gi")),
		want:     want{recovering: true, to: "2Gi", recoveredFrom: "10Gi"},
	}, {
		name:     "recovered: compatible, the annotation still says from what",
		template: "2Gi",
		pvc:      pvc("data-web-0", "2Gi", "2Gi", allocatedSize("2Gi"), recoveredAnnotation("10Gi")),
		want:     want{to: "2Gi", recoveredFrom: "10Gi"},
	}, {
		name:     "an annotation that is no quantity is not ours",
		template: "2Gi",
		pvc:      pvc("data-web-0", "2Gi", "2Gi", recoveredAnnotation("lots")),
		want:     want{to: "2Gi"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sts := statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", tc.template)})
			if tc.pvc.Spec.StorageClassName != nil && *tc.pvc.Spec.StorageClassName == "other" {
				sts.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr("standard")
			}
			res, err := Compute(Input{Desired: sts, PVCs: []corev1.PersistentVolumeClaim{tc.pvc}})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Claims[0]
			got := want{recovery: c.Recovery, recovering: c.Recovering, overSized: c.OverSized, needsPatch: c.NeedsPatch(),
				to: c.RequestTo.String(), recoveredFrom: c.RecoveredFrom}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if c.Recovery && c.ToBytes != c.TemplateBytes {
				t.Errorf("ToBytes %d, want the template's %d", c.ToBytes, c.TemplateBytes)
			}
		})
	}
}

func TestComputeRefusesAnUncountableAllocatedSize(t *testing.T) {
	p := pvc("data-web-0", "2Gi", "1Gi", allocatedSize("9Ei"))
	_, err := Compute(Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "2Gi")}), PVCs: []corev1.PersistentVolumeClaim{p}})
	if err == nil || !strings.Contains(err.Error(), "data-web-0") || !strings.Contains(err.Error(), "status.allocatedResources.storage") {
		t.Fatalf("err = %v, want the claim and field named", err)
	}
}
