package plan

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
)

func TestQuestions(t *testing.T) {
	class := "fast"
	replicas := int32(3)
	tmpl := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("15Gi")}},
		},
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec:       appsv1.StatefulSetSpec{Replicas: &replicas, VolumeClaimTemplates: []corev1.PersistentVolumeClaim{tmpl}},
		Status:     appsv1.StatefulSetStatus{Replicas: 3},
	}
	pvc := func(name, size string) corev1.PersistentVolumeClaim {
		return corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: &class,
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
			},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		}
	}
	// Claim 0 grows, claim 1 already matches, claim 2 does not exist yet.
	pvcs := []corev1.PersistentVolumeClaim{pvc("data-web-0", "10Gi"), pvc("data-web-1", "15Gi")}
	res, err := diff.Compute(diff.Input{Desired: sts, PVCs: pvcs, LiveTemplates: []corev1.PersistentVolumeClaim{tmpl, {ObjectMeta: metav1.ObjectMeta{Name: "logs"}}}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*corev1.PersistentVolumeClaim{"data-web-0": &pvcs[0], "data-web-1": &pvcs[1]}

	qs := Questions(sts, res, byName, false)
	if len(qs) != 2 {
		t.Fatalf("got %d questions, want the growing claim and the removed template: %+v", len(qs), qs)
	}
	q := qs[0]
	if q.Claim != "data-web-0" || q.PVC != byName["data-web-0"] {
		t.Errorf("first question is about %q (PVC %p), want data-web-0", q.Claim, q.PVC)
	}
	want := policies.QuantityChange{From: "10Gi", To: "15Gi", FromBytes: 10 << 30, ToBytes: 15 << 30, Capacity: "10Gi", CapacityBytes: 10 << 30}
	if got := q.Input.Change.Storage; got == nil || *got != want {
		t.Errorf("storage change = %+v, want %+v", got, want)
	}
	if c := q.Input.Change; c.Kind != policies.KindClaim || c.Namespace != "shop" || c.StatefulSet != "web" || c.Template != "data" || c.Ordinal != 0 {
		t.Errorf("change = %+v, want claim data-web-0 of shop/web", c)
	}
	if c := q.Input.Change.StorageClassName; c == nil || c.From != "fast" || c.To != "fast" {
		t.Errorf("storage class change = %+v, want fast → fast", c)
	}
	if q.Input.Template == nil || q.Input.Template.Name != "data" || q.Input.PVC == nil || q.Input.PVC.Name != "data-web-0" {
		t.Errorf("template %v, PVC %v: want template data and PVC data-web-0", q.Input.Template, q.Input.PVC)
	}
	if s := q.Input.StatefulSet; s == sts || len(s.ManagedFields) > 0 || s.Status.Replicas != 0 {
		t.Errorf("the StatefulSet in the input must be a copy without managedFields and status: %+v", s)
	}
	if len(sts.ManagedFields) == 0 {
		t.Error("Questions changed the caller's StatefulSet")
	}
	last := qs[1]
	if last.Claim != "" || last.PVC != nil || last.Input.Change.Kind != policies.KindStatefulSet || len(last.Input.Change.TemplatesRemoved) != 1 || last.Input.Change.TemplatesRemoved[0] != "logs" {
		t.Errorf("StatefulSet question = %+v, want kind statefulset with logs removed", last)
	}
	if last.Input.Change.Recreate {
		t.Error("recreate asked although the caller said no re-create")
	}
}

// A proposal the StatefulSet must be re-created for is asked about as a
// whole even when no template is added or removed.
func TestQuestionsRecreate(t *testing.T) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	if qs := Questions(sts, diff.Result{}, nil, false); len(qs) != 0 {
		t.Fatalf("nothing changes and nothing is re-created, yet %d questions", len(qs))
	}
	qs := Questions(sts, diff.Result{}, nil, true)
	if len(qs) != 1 || qs[0].Claim != "" || qs[0].Input.Change.Kind != policies.KindStatefulSet || !qs[0].Input.Change.Recreate {
		t.Fatalf("questions = %+v, want one StatefulSet-level question with recreate", qs)
	}
}

func TestDenialText(t *testing.T) {
	got := DenialText([]policies.Reason{{Policy: "max-step", Message: "too far"}, {Policy: "increase-only", Message: "shrinks"}})
	if want := "max-step: too far; increase-only: shrinks"; got != want {
		t.Errorf("DenialText = %q, want %q", got, want)
	}
}

func TestWithTemplates(t *testing.T) {
	two, five := int32(2), int32(5)
	q := resource.MustParse
	live := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: map[string]string{"live": "yes"}},
		Spec: appsv1.StatefulSetSpec{Replicas: &two, VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec:       corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q("10Gi")}}},
		}}},
	}
	proposal := live.DeepCopy()
	proposal.Annotations = map[string]string{"proposal": "yes"}
	proposal.Spec.Replicas = &five
	proposal.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = q("20Gi")

	got := WithTemplates(live, proposal)
	if *got.Spec.Replicas != 2 || got.Annotations["live"] != "yes" || got.Annotations["proposal"] != "" {
		t.Errorf("got replicas %d, annotations %v: want the live StatefulSet's", *got.Spec.Replicas, got.Annotations)
	}
	if s := got.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]; s.String() != "20Gi" {
		t.Errorf("template requests %s, want the proposal's 20Gi", s.String())
	}
	proposal.Spec.VolumeClaimTemplates[0].Name = "changed"
	if got.Spec.VolumeClaimTemplates[0].Name != "data" || live.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String() != "10Gi" {
		t.Error("the result shares templates with the proposal, or the live object was changed")
	}
}

func TestRestartQuestionAsksNothingAboutSizes(t *testing.T) {
	class := "fast"
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &class},
		}}},
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data-web-2", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}}}
	c := diff.ClaimChange{Name: "data-web-2", Template: "data", Ordinal: 2, NodeResizePending: true}
	q := RestartQuestion(sts, c, pvc, "web-2")
	want := policies.Change{Kind: policies.KindClaim, Namespace: "shop", StatefulSet: "web", Claim: "data-web-2", Template: "data", Ordinal: 2, Restart: true, Pod: "web-2"}
	if got := q.Input.Change; !reflect.DeepEqual(got, want) {
		t.Errorf("change = %+v, want %+v", got, want)
	}
	if q.Claim != "data-web-2" || q.PVC != pvc {
		t.Errorf("question about %q (PVC %p), want data-web-2", q.Claim, q.PVC)
	}
	if q.Input.PVC.ManagedFields != nil || q.Input.StatefulSet.ManagedFields != nil || q.Input.Template == nil || q.Input.Template.Name != "data" {
		t.Errorf("input objects not trimmed or template missing: %+v", q.Input)
	}
}
