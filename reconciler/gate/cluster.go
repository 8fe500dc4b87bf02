package gate

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/policies"
)

// ClusterFacts are the facts about a StatefulSet of namespace read from c
// (the controller's cache): its Namespace, the namespace's ResourceQuotas,
// a claim's StorageClass. The rollout and autoresize read them alike.
func ClusterFacts(c client.Reader, namespace string, source policies.Source) Facts {
	return Facts{
		Namespace: func(ctx context.Context) (*corev1.Namespace, error) {
			ns := &corev1.Namespace{}
			if err := c.Get(ctx, types.NamespacedName{Name: namespace}, ns); err != nil {
				return nil, fmt.Errorf("reading Namespace %s: %w", namespace, err)
			}
			return ns, nil
		},
		ResourceQuotas: func(ctx context.Context) ([]corev1.ResourceQuota, error) {
			var list corev1.ResourceQuotaList
			if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
				return nil, fmt.Errorf("listing ResourceQuotas in namespace %s: %w", namespace, err)
			}
			return list.Items, nil
		},
		StorageClass: func(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
			if pvc == nil || pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName == "" {
				return nil, nil
			}
			sc := &storagev1.StorageClass{}
			if err := c.Get(ctx, types.NamespacedName{Name: *pvc.Spec.StorageClassName}, sc); err != nil {
				if client.IgnoreNotFound(err) == nil {
					return nil, nil
				}
				return nil, fmt.Errorf("reading StorageClass %s of PVC %s/%s: %w", *pvc.Spec.StorageClassName, pvc.Namespace, pvc.Name, err)
			}
			return sc, nil
		},
		Source: source,
	}
}
