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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/serverinfo"
)

// clusterState reads the live state the proposal is compared with: the
// StatefulSets and claims of the proposed StatefulSets' namespaces, every
// StorageClass, and the Namespaces and ResourceQuotas (optional: policies
// may read their labels, quota-fits the quotas). It only gets and lists,
// so a kubeconfig with read access is enough; nothing is written. With
// moves, it also indexes the StatefulSets for namespaceMoves: those of
// every namespace when a proposed one is new in its own.
func clusterState(ctx context.Context, cfg *rest.Config, sets []proposal, moves bool) (*current, map[string]placement, []Warning, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	cur, warns, err := namespacesState(ctx, c, namespacesOf(sets))
	if err == nil {
		if cur.server, err = serverSupport(cfg); err != nil {
			warns = append(warns, Warning{Message: fmt.Sprintf("cannot tell whether the API server serves VolumeAttributesClasses (%v): class changes are checked as if it did", err)})
			err = nil
		}
	}
	if err != nil || !moves {
		return cur, nil, warns, err
	}
	index, warn, err := statefulSetIndex(ctx, c, cur, sets)
	if warn != "" {
		warns = append(warns, Warning{Message: warn})
	}
	return cur, index, warns, err
}

// serverSupport reads what the API server supports, as the controller
// does; whether it accepts a lowered request it would learn from a dry
// run, a write check never makes, so that stays unknown.
func serverSupport(cfg *rest.Config) (policies.Server, error) {
	vac, err := serverinfo.VolumeAttributesClasses(cfg)
	if err != nil {
		return policies.Server{}, err
	}
	return policies.Server{VolumeAttributesClasses: &vac}, nil
}

// namespacesState reads the StorageClasses and what check reads of the
// namespaces.
func namespacesState(ctx context.Context, c client.Client, namespaces []string) (*current, []Warning, error) {
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

// statefulSetIndex indexes the cluster's StatefulSets by namespace/name for
// namespaceMoves: those of every namespace (metadata only) when a proposed
// StatefulSet is new in its namespace, since the one it may have left is
// elsewhere; else those read already. Without the right to list them in
// every namespace, those read already, and a warning.
func statefulSetIndex(ctx context.Context, c client.Client, cur *current, sets []proposal) (map[string]placement, string, error) {
	known := func() map[string]placement {
		index := make(map[string]placement, len(cur.statefulSets))
		for _, s := range cur.statefulSets {
			index[s.live.Namespace+"/"+s.live.Name] = placement{namespace: s.live.Namespace, name: s.live.Name}
		}
		return index
	}
	isNew := func(p proposal) bool {
		_, ok := cur.statefulSets[p.namespace+"/"+p.name]
		return !ok
	}
	if !slices.ContainsFunc(sets, isNew) {
		return known(), "", nil
	}
	index := map[string]placement{}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("StatefulSetList"))
	for {
		switch err := c.List(ctx, list, client.Limit(500), client.Continue(list.Continue)); {
		case apierrors.IsForbidden(err):
			return known(), "cannot list StatefulSets in every namespace (grant list on statefulsets cluster-wide): " +
				"a StatefulSet proposed in another namespace than the cluster's is checked as new", nil
		case err != nil:
			return nil, "", fmt.Errorf("listing StatefulSets in every namespace: %w", err)
		}
		for _, m := range list.Items {
			index[m.Namespace+"/"+m.Name] = placement{namespace: m.Namespace, name: m.Name}
		}
		if list.Continue == "" {
			return index, "", nil
		}
	}
}

// namespacesOf lists the namespaces of the StatefulSets, sorted.
func namespacesOf(sets []proposal) []string {
	seen := map[string]bool{}
	for _, s := range sets {
		seen[s.namespace] = true
	}
	return slices.Sorted(maps.Keys(seen))
}
