package plan

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// The policies see the bytes the diff compared: half a byte below the
// claim is no change at all (not asked, not over-sized), half a byte above
// is a one-byte increase.
func TestQuestionsSeeTheDiffsBytes(t *testing.T) {
	cases := []struct {
		template             string
		asked                bool
		fromBytes, toBytes   int64
		overSized, needPatch bool
	}{
		{template: "10737418239.5"},
		{template: "10737418240.5", asked: true, fromBytes: 10 << 30, toBytes: 10<<30 + 1, needPatch: true},
		{template: "10737418239", asked: true, fromBytes: 10 << 30, toBytes: 10<<30 - 1, overSized: true},
	}
	for _, tc := range cases {
		t.Run(tc.template, func(t *testing.T) {
			sts := &appsv1.StatefulSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
				Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec:       corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(tc.template)}}},
				}}},
			}
			pvc := corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data-web-0"},
				Spec:       corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}},
				Status:     corev1.PersistentVolumeClaimStatus{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
			}
			res, err := diff.Compute(diff.Input{Desired: sts, PVCs: []corev1.PersistentVolumeClaim{pvc}})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Claims[0]
			if c.OverSized != tc.overSized || c.NeedsPatch() != tc.needPatch {
				t.Errorf("over-sized %v, needs patch %v; want %v, %v", c.OverSized, c.NeedsPatch(), tc.overSized, tc.needPatch)
			}
			qs := Questions(sts, res, map[string]*corev1.PersistentVolumeClaim{pvc.Name: &pvc}, false)
			if !tc.asked {
				for _, q := range qs {
					t.Errorf("asked about %s with %+v, want no question: the bytes are equal", q.Claim, q.Input.Change.Storage)
				}
				return
			}
			if len(qs) != 1 || qs[0].Input.Change.Storage == nil {
				t.Fatalf("questions %+v, want one about data-web-0", qs)
			}
			if s := qs[0].Input.Change.Storage; s.FromBytes != tc.fromBytes || s.ToBytes != tc.toBytes {
				t.Errorf("policies see %d → %d bytes, want %d → %d", s.FromBytes, s.ToBytes, tc.fromBytes, tc.toBytes)
			}
		})
	}
}
