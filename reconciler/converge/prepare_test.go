package converge

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// liveLike is a StatefulSet as read from the server: every server-set field filled.
func liveLike() *appsv1.StatefulSet {
	now := metav1.NewTime(time.Unix(1_800_000_000, 0))
	return &appsv1.StatefulSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop",
			UID: "uid-1", ResourceVersion: "42", Generation: 3,
			//lint:ignore SA1019 old servers still return selfLink, and Prepare must drop it
			SelfLink:          "/apis/apps/v1/x",
			CreationTimestamp: now, DeletionTimestamp: &now, DeletionGracePeriodSeconds: ptr.To[int64](0),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kustomize-controller"}},
			Labels:        map[string]string{"app": "web"},
			Annotations:   map[string]string{"note": "kept"},
			Finalizers:    []string{metav1.FinalizerOrphanDependents, "example.com/keep", metav1.FinalizerDeleteDependents},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Database", Name: "db",
				UID: "owner-uid", Controller: ptr.To(true)}},
		},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](3),
			ServiceName: "web",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("2Gi")}},
				},
			}},
		},
		Status: appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3, CurrentRevision: "web-abc"},
	}
}

func TestPrepareDropsServerFields(t *testing.T) {
	in := liveLike()
	got := Prepare(in)

	m := got.ObjectMeta
	//lint:ignore SA1019 checks that the legacy field is dropped
	if m.UID != "" || m.ResourceVersion != "" || m.Generation != 0 || m.SelfLink != "" ||
		!m.CreationTimestamp.IsZero() || m.DeletionTimestamp != nil || m.DeletionGracePeriodSeconds != nil || m.ManagedFields != nil {
		t.Errorf("server-set metadata survived: %+v", m)
	}
	if !equality.Semantic.DeepEqual(got.Status, appsv1.StatefulSetStatus{}) {
		t.Errorf("status survived: %+v", got.Status)
	}
	if got.APIVersion != "apps/v1" || got.Kind != "StatefulSet" {
		t.Errorf("type meta = %v", got.TypeMeta)
	}
}

func TestPrepareKeepsUserFields(t *testing.T) {
	in := liveLike()
	got := Prepare(in)

	if got.Name != "web" || got.Namespace != "shop" {
		t.Errorf("key = %s/%s", got.Namespace, got.Name)
	}
	if !equality.Semantic.DeepEqual(got.Labels, in.Labels) || !equality.Semantic.DeepEqual(got.Annotations, in.Annotations) {
		t.Errorf("labels/annotations = %v %v", got.Labels, got.Annotations)
	}
	if !equality.Semantic.DeepEqual(got.OwnerReferences, in.OwnerReferences) {
		t.Errorf("ownerReferences = %v", got.OwnerReferences)
	}
	if want := []string{"example.com/keep"}; !equality.Semantic.DeepEqual(got.Finalizers, want) {
		t.Errorf("finalizers = %v, want %v (garbage-collector finalizers dropped)", got.Finalizers, want)
	}
	if !equality.Semantic.DeepEqual(got.Spec, in.Spec) {
		t.Errorf("spec changed:\n got %+v\nwant %+v", got.Spec, in.Spec)
	}
}

// Prepare must not alias desired: the caller keeps using its object, and the
// journal copy must not change when it does.
func TestPrepareDoesNotAlias(t *testing.T) {
	in := liveLike()
	got := Prepare(in)
	got.Labels["app"] = "changed"
	got.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("9Gi")
	*got.Spec.Replicas = 9
	got.OwnerReferences[0].Name = "other"

	fresh := liveLike()
	if !equality.Semantic.DeepEqual(in.Labels, fresh.Labels) || !equality.Semantic.DeepEqual(in.Spec, fresh.Spec) ||
		!equality.Semantic.DeepEqual(in.OwnerReferences, fresh.OwnerReferences) {
		t.Fatal("changing Prepare's result changed its input")
	}
	if len(in.Finalizers) != 3 {
		t.Fatalf("input finalizers changed: %v", in.Finalizers)
	}
}

func TestPrepareMinimal(t *testing.T) {
	got := Prepare(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}})
	if got.Name != "db" || got.Finalizers != nil || got.Labels != nil {
		t.Fatalf("got %+v", got.ObjectMeta)
	}
}

func TestInheritUnset(t *testing.T) {
	live := liveLike()
	obj := Prepare(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}})
	inheritUnset(obj, live)
	if obj.Spec.Replicas == nil || *obj.Spec.Replicas != 3 {
		t.Errorf("replicas = %v, want live's 3 (an omitted count would default to 1 and delete Pods)", obj.Spec.Replicas)
	}
	if obj.Namespace != "shop" {
		t.Errorf("namespace = %q, want live's", obj.Namespace)
	}
	*obj.Spec.Replicas = 5
	if *live.Spec.Replicas != 3 {
		t.Error("inheritUnset aliased live's replicas")
	}

	set := Prepare(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1)}})
	inheritUnset(set, live)
	if *set.Spec.Replicas != 1 {
		t.Errorf("replicas = %d, want desired's explicit 1", *set.Spec.Replicas)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	obj := Prepare(liveLike())
	rec, err := Record(sealKey, "uid-1", obj)
	if err != nil {
		t.Fatal(err)
	}
	if rec.UID != "uid-1" {
		t.Errorf("uid = %q", rec.UID)
	}
	var typed map[string]any
	if err := json.Unmarshal(rec.Object.Raw, &typed); err != nil || typed["kind"] != "StatefulSet" {
		t.Errorf("stored object is not a self-describing StatefulSet: %v %v", err, typed["kind"])
	}
	back, err := objectOf(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(back, obj) {
		t.Errorf("round trip changed the object:\n got %+v\nwant %+v", back, obj)
	}

	// An in-memory journal may return the RawExtension with Object set instead of Raw.
	viaObject := v1alpha1.PendingRecreate{UID: "uid-1", Object: runtime.RawExtension{Object: obj}}
	back, err = objectOf(&viaObject)
	if err != nil || !equality.Semantic.DeepEqual(back, obj) {
		t.Errorf("Object form: %v, equal=%v", err, equality.Semantic.DeepEqual(back, obj))
	}

	if _, err := objectOf(&v1alpha1.PendingRecreate{UID: "x"}); err == nil {
		t.Error("empty record decoded without error")
	}
	if _, err := objectOf(&v1alpha1.PendingRecreate{UID: "x", Object: runtime.RawExtension{Raw: []byte("{")}}); err == nil {
		t.Error("corrupt record decoded without error")
	}
}

// A record edited by hand (or written by an older version) must not bring
// server-set fields into the create.
func TestObjectOfSanitises(t *testing.T) {
	raw, _ := json.Marshal(liveLike())
	back, err := objectOf(&v1alpha1.PendingRecreate{UID: "uid-1", Object: runtime.RawExtension{Raw: raw}})
	if err != nil {
		t.Fatal(err)
	}
	if back.UID != "" || back.ResourceVersion != "" || back.Status.Replicas != 0 {
		t.Errorf("server fields came back: uid=%q rv=%q status=%+v", back.UID, back.ResourceVersion, back.Status)
	}
}
