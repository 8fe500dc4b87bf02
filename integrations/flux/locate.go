package flux

import (
	"context"
	"fmt"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

var _ source.Parent = (*Kustomizations)(nil)
var _ source.Locator = (*Kustomizations)(nil)

// Names implements source.AtRest: the Kustomization kustomize-controller's
// labels on live name (whoever edits live can set them: Manages confirms).
func (*Kustomizations) Names(live metav1.Object) (types.NamespacedName, bool) {
	n := live.GetLabels()[LabelKustomizationName]
	return types.NamespacedName{Namespace: live.GetLabels()[LabelKustomizationNamespace], Name: n}, n != ""
}

// ManagesAtRest implements source.AtRest: the inventory is the
// Kustomization's own record whether or not a proposal names live, once
// its spec.kubeConfig says it applies to the cluster live was read in.
func (k *Kustomizations) ManagesAtRest(ctx context.Context, obj client.Object, cluster string, live *appsv1.StatefulSet) error {
	ks := obj.(*kustomizev1.Kustomization)
	remote, err := k.remote(ctx, ks)
	if err != nil {
		return err
	}
	if err := remote.AppliesIn("the Kustomization "+ks.Namespace+"/"+ks.Name, cluster); err != nil {
		return err
	}
	return k.Manages(ctx, obj, live)
}

// Locate implements source.Locator: the GitRepository's URL and branch,
// and the Kustomization's path in it. A Kustomization sets no values of
// its own, so parents is not asked.
func (k *Kustomizations) Locate(ctx context.Context, obj client.Object, _ source.Parents) (source.Where, error) {
	return k.LocateSource(ctx, obj)
}

// LocateSource implements source.Parent: where the Kustomization obj
// builds from, refused when it is no GitRepository, follows no branch or
// is in a namespace kustomize-controller's lockdown refuses.
func (k *Kustomizations) LocateSource(ctx context.Context, obj client.Object) (source.Where, error) {
	ks := obj.(*kustomizev1.Kustomization)
	key := client.ObjectKeyFromObject(ks)
	ref := ks.Spec.SourceRef
	if ref.Kind != sourcev1.GitRepositoryKind {
		return source.Where{}, fmt.Errorf("the Kustomization %s builds from a %s (spec.sourceRef), not a GitRepository: no pull request can change it", key, ref.Kind)
	}
	w, err := toolkit.GitRepository(ctx, k.Reader, key.Namespace, ref.Namespace, ref.Name, k.NoCrossNamespaceRefs)
	if err != nil {
		return source.Where{}, fmt.Errorf("the Kustomization %s: %w", key, err)
	}
	w.Dir = source.RepoPath(ks.Spec.Path)
	return w, nil
}
