package diff

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// isRecovery says whether lowering c's request to the template recovers
// from a failed expansion (KEP-1790, GA since Kubernetes 1.34): the
// expansion failed, and the template lies strictly between the capacity
// and the request. The API server accepts a lower request only above
// status.capacity; a claim whose expansion did not fail is never lowered,
// and a claim with immutable differences is never patched at all.
func isRecovery(c ClaimChange, capacity, template int64) bool {
	return c.ResizeError != "" && len(c.Immutable) == 0 &&
		capacity > 0 && capacity < template && template < c.FromBytes
}

// isRecovering says whether pvc's request was lowered below what the
// resizer was last asked for (status.allocatedResources) and the storage
// has not reached it yet: the resizer then still reports the larger
// attempt, and its failure is no longer the claim's.
func isRecovering(pvc *corev1.PersistentVolumeClaim, request, capacity int64) (bool, error) {
	q, ok := pvc.Status.AllocatedResources[corev1.ResourceStorage]
	if !ok || q.IsZero() {
		return false, nil
	}
	allocated, err := Bytes(q)
	if err != nil {
		return false, fmt.Errorf("PersistentVolumeClaim %s/%s: status.allocatedResources.storage: %w", pvc.Namespace, pvc.Name, err)
	}
	return request < allocated && request > capacity, nil
}

// recoveredFrom is the request a recovery lowered pvc's from, as the
// rollout recorded it; a value that is no quantity is not ours and is
// ignored (it would only be shown).
func recoveredFrom(pvc *corev1.PersistentVolumeClaim) string {
	v, ok := pvc.Annotations[v1alpha1.RecoveredFromAnnotation]
	if !ok {
		return ""
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return ""
	}
	return q.String()
}
