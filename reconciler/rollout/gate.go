package rollout

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/gate"
)

// facts are the policies' facts about sts, read from the manager's cache.
func (r *Reconciler) facts(sts *appsv1.StatefulSet, source policies.Source) gate.Facts {
	return gate.Facts{
		Namespace:      func(ctx context.Context) (*corev1.Namespace, error) { return r.namespaceOf(ctx, sts.Namespace) },
		ResourceQuotas: func(ctx context.Context) ([]corev1.ResourceQuota, error) { return r.quotasIn(ctx, sts.Namespace) },
		StorageClass:   r.storageClassOf,
		Source:         source,
	}
}

func (r *Reconciler) storageClassOf(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
	if pvc == nil || pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName == "" {
		return nil, nil
	}
	sc := &storagev1.StorageClass{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: *pvc.Spec.StorageClassName}, sc); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("reading StorageClass %s of PVC %s/%s: %w", *pvc.Spec.StorageClassName, pvc.Namespace, pvc.Name, err)
	}
	return sc, nil
}

func (r *Reconciler) namespaceOf(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: name}, ns); err != nil {
		return nil, fmt.Errorf("reading Namespace %s: %w", name, err)
	}
	return ns, nil
}

func (r *Reconciler) quotasIn(ctx context.Context, namespace string) ([]corev1.ResourceQuota, error) {
	var list corev1.ResourceQuotaList
	if err := r.client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing ResourceQuotas in namespace %s: %w", namespace, err)
	}
	return list.Items, nil
}
