package converge

import (
	"encoding/json"
	"fmt"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Prepare builds the StatefulSet to create from desired. It keeps what a user or
// GitOps tool writes (name, namespace, labels, annotations, finalizers, owner
// references, the whole spec) and leaves out everything the API server assigns
// (uid, resourceVersion, generation, creationTimestamp, managedFields,
// deletionTimestamp, selfLink, status): a create carrying those is refused or
// misleading. The fields are copied by allow-list so that server-set fields
// added by future API versions are dropped too. desired is not modified.
func Prepare(desired *appsv1.StatefulSet) *appsv1.StatefulSet {
	in := desired.DeepCopy()
	return &appsv1.StatefulSet{
		// Set explicitly: the journal stores the object as JSON and a reader
		// (a person, or another version of claimwarden) must know what it is.
		TypeMeta: metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            in.Name,
			Namespace:       in.Namespace,
			Labels:          in.Labels,
			Annotations:     in.Annotations,
			Finalizers:      userFinalizers(in.Finalizers),
			OwnerReferences: in.OwnerReferences,
		},
		Spec: in.Spec,
	}
}

// userFinalizers drops the garbage collector's finalizers. The API server adds
// them while it deletes an object (our own orphan delete adds "orphan"); copied
// onto the new object they would make its first deletion orphan or
// foreground-delete regardless of what the deleting client asked for.
func userFinalizers(in []string) []string {
	var out []string
	for _, f := range in {
		if f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents {
			continue
		}
		out = append(out, f)
	}
	return out
}

// inheritUnset fills fields that desired leaves to "whoever else manages them"
// with live's value. A manifest without spec.replicas (an HPA or `kubectl scale`
// owns the count) would be defaulted to 1 on create and scale the StatefulSet
// down, deleting Pods; a server-side apply of the same manifest would have kept
// the live count, so the re-created object keeps it as well.
func inheritUnset(obj, live *appsv1.StatefulSet) {
	if obj.Spec.Replicas == nil && live.Spec.Replicas != nil {
		r := *live.Spec.Replicas
		obj.Spec.Replicas = &r
	}
	if obj.Namespace == "" {
		obj.Namespace = live.Namespace
	}
}

// objectOf decodes a journal entry. It accepts Object as well as Raw because an
// in-memory Journal may hand back the RawExtension as it was given, and Prepare
// runs again so that a record written by hand cannot smuggle in server fields.
// Anything but an apps/v1 StatefulSet is refused.
func objectOf(rec *v1alpha1.PendingRecreate) (*appsv1.StatefulSet, error) {
	raw := rec.Object.Raw
	if len(raw) == 0 && rec.Object.Object != nil {
		var err error
		if raw, err = json.Marshal(rec.Object.Object); err != nil {
			return nil, fmt.Errorf("encode journal object: %w", err)
		}
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("journal record for uid %s holds no object", rec.UID)
	}
	var sts appsv1.StatefulSet
	if err := json.Unmarshal(raw, &sts); err != nil {
		return nil, fmt.Errorf("decode journal object: %w", err)
	}
	if gvk := sts.GroupVersionKind(); gvk != appsv1.SchemeGroupVersion.WithKind("StatefulSet") {
		return nil, fmt.Errorf("journal object is apiVersion %.64q kind %.64q, not an apps/v1 StatefulSet", sts.APIVersion, sts.Kind)
	}
	return Prepare(&sts), nil
}
