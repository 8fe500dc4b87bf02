package invariants

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// claimRecord is what the recorder keeps per PVC.
type claimRecord struct {
	// highest is the highest storage request seen since the last documented
	// recovery: a watch that missed an update (a relist after an outage)
	// still shows a request below it.
	highest resource.Quantity
	// written counts claimwarden's spec writes by the spec they produced.
	written map[string]int
}

func (r *Recorder) claimHandler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			pvc := obj.(*corev1.PersistentVolumeClaim)
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.claims[pvc.UID] == nil {
				r.claims[pvc.UID] = &claimRecord{highest: storageRequest(pvc), written: map[string]int{}}
			}
		},
		UpdateFunc: func(o, n any) { r.claimUpdated(o.(*corev1.PersistentVolumeClaim), n.(*corev1.PersistentVolumeClaim)) },
		DeleteFunc: func(obj any) {
			pvc, ok := finalState(obj).(*corev1.PersistentVolumeClaim)
			if ok {
				r.violate(ClaimDeleted, claimName(pvc), string(pvc.UID), "the claim was deleted")
			}
		},
	}
}

func (r *Recorder) claimUpdated(old, pvc *corev1.PersistentVolumeClaim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old.ResourceVersion != pvc.ResourceVersion {
		r.counts.ClaimWrites++
	}
	rec := r.claims[pvc.UID]
	if rec == nil {
		rec = &claimRecord{highest: storageRequest(old), written: map[string]int{}}
		r.claims[pvc.UID] = rec
	}
	if pvc.DeletionTimestamp != nil {
		r.violateLocked(ClaimDeleted, claimName(pvc), string(pvc.UID), "the claim is being deleted")
	}
	req := storageRequest(pvc)
	switch cmp := req.Cmp(rec.highest); {
	case cmp > 0:
		rec.highest = req
	case cmp < 0 && recoveredFrom(pvc, rec.highest):
		// A failed expansion recovered from (KEP-1790), as the claim says.
		rec.highest = req
	case cmp < 0:
		r.violateLocked(RequestLowered, claimName(pvc), string(pvc.UID)+"/"+req.String(),
			"storage request lowered from %s to %s without %s naming %s", rec.highest.String(), req.String(),
			v1alpha1.RecoveredFromAnnotation, rec.highest.String())
	}
	if equality.Semantic.DeepEqual(old.Spec, pvc.Spec) || !writtenByClaimwarden(old, pvc) {
		return
	}
	r.counts.ClaimwardenPatches++
	key := fmt.Sprintf("request %s, volumeAttributesClassName %q", req.String(), ptr.Deref(pvc.Spec.VolumeAttributesClassName, ""))
	rec.written[key]++
	if n := rec.written[key]; n > 1 {
		r.violateLocked(RepeatedPatch, claimName(pvc), fmt.Sprintf("%s/%s/%d", pvc.UID, key, n),
			"claimwarden wrote the claim's spec to %s %d times: one claim change, several patches", key, n)
	}
}

// writtenByClaimwarden says whether the update from old to pvc was
// claimwarden's: its managedFields entry on the object (not a subresource)
// appeared or changed (the server stamps the entry of the manager that wrote).
func writtenByClaimwarden(old, pvc *corev1.PersistentVolumeClaim) bool {
	now := claimwardenEntry(pvc)
	if now == nil {
		return false
	}
	before := claimwardenEntry(old)
	return before == nil || !equality.Semantic.DeepEqual(before, now)
}

func claimwardenEntry(pvc *corev1.PersistentVolumeClaim) *metav1.ManagedFieldsEntry {
	for i, m := range pvc.ManagedFields {
		if m.Manager == v1alpha1.ControllerName && m.Subresource == "" {
			return &pvc.ManagedFields[i]
		}
	}
	return nil
}

// recoveredFrom says whether pvc documents a recovery from request from.
func recoveredFrom(pvc *corev1.PersistentVolumeClaim, from resource.Quantity) bool {
	v, ok := pvc.Annotations[v1alpha1.RecoveredFromAnnotation]
	if !ok {
		return false
	}
	q, err := resource.ParseQuantity(v)
	return err == nil && q.Cmp(from) == 0
}

func storageRequest(pvc *corev1.PersistentVolumeClaim) resource.Quantity {
	return pvc.Spec.Resources.Requests[corev1.ResourceStorage]
}

func claimName(pvc *corev1.PersistentVolumeClaim) string {
	return "PersistentVolumeClaim " + pvc.Namespace + "/" + pvc.Name
}
