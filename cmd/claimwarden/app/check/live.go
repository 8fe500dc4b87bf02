package check

import (
	"context"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clusterState reads the live state the proposal is compared with: the
// StatefulSets and claims of the given namespaces, every StorageClass, and
// the Namespaces and ResourceQuotas (optional: policies may read their
// labels, quota-fits the quotas). It only gets
// and lists, so a kubeconfig with read access is enough; nothing is written.
func clusterState(ctx context.Context, cfg *rest.Config, namespaces []string) (*current, []Warning, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	cur := newCurrent()
	var warns []Warning

	var classes storagev1.StorageClassList
	if err := c.List(ctx, &classes); err != nil {
		return nil, nil, fmt.Errorf("listing StorageClasses: %w", err)
	}
	for i := range classes.Items {
		cur.storageClasses[classes.Items[i].Name] = &classes.Items[i]
	}
	for _, ns := range namespaces {
		var sets appsv1.StatefulSetList
		if err := c.List(ctx, &sets, client.InNamespace(ns)); err != nil {
			return nil, nil, fmt.Errorf("listing StatefulSets in namespace %s: %w", ns, err)
		}
		for i := range sets.Items {
			cur.statefulSets[ns+"/"+sets.Items[i].Name] = statefulSet{live: &sets.Items[i]}
		}
		var claims corev1.PersistentVolumeClaimList
		if err := c.List(ctx, &claims, client.InNamespace(ns)); err != nil {
			return nil, nil, fmt.Errorf("listing PersistentVolumeClaims in namespace %s: %w", ns, err)
		}
		for i := range claims.Items {
			cur.addClaim(ns, claims.Items[i].Name, claim{live: &claims.Items[i]})
		}
		var quotas corev1.ResourceQuotaList
		switch err := c.List(ctx, &quotas, client.InNamespace(ns)); {
		case err == nil:
			for i := range quotas.Items {
				cur.addQuota(&quotas.Items[i])
			}
		case apierrors.IsForbidden(err):
			warns = append(warns, Warning{Message: fmt.Sprintf("cannot list ResourceQuotas in namespace %s (grant list on resourcequotas): policies see no quota (quota-fits allows)", ns)})
		default:
			return nil, nil, fmt.Errorf("listing ResourceQuotas in namespace %s: %w", ns, err)
		}
		n := &corev1.Namespace{}
		switch err := c.Get(ctx, client.ObjectKey{Name: ns}, n); {
		case err == nil:
			cur.namespaces[ns] = n
		case apierrors.IsNotFound(err):
			// A namespace the proposal creates; its StatefulSets are new.
		case apierrors.IsForbidden(err):
			warns = append(warns, Warning{Message: fmt.Sprintf("cannot read Namespace %s (grant get on namespaces): policies see no namespace labels", ns)})
		default:
			return nil, nil, fmt.Errorf("reading Namespace %s: %w", ns, err)
		}
	}
	return cur, warns, nil
}

// namespacesOf lists the namespaces of the StatefulSets, sorted.
func namespacesOf(sets []proposal) []string {
	seen := map[string]bool{}
	for _, s := range sets {
		seen[s.namespace] = true
	}
	return slices.Sorted(maps.Keys(seen))
}
