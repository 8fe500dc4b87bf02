package autoresize

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/integrations/helm"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// owner is a GitOps tool as autoresize finds it from a StatefulSet at
// rest: the labels it puts on what it applies name the tool object, and
// the tool's own record of what it applies (source.Tool's Manages) must
// confirm it. Labels are the tenant's to write; the record is the tool's.
type owner struct {
	kind                      string
	nameLabel, namespaceLabel string
	object                    func() client.Object
	manages                   func(ctx context.Context, obj client.Object, live *appsv1.StatefulSet) error
}

// owners are the tools autoresize proposes for. Their Manages read only
// obj and live, so a zero tool serves.
var owners = []owner{
	{
		kind: kustomizev1.KustomizationKind, nameLabel: flux.LabelKustomizationName, namespaceLabel: flux.LabelKustomizationNamespace,
		object: func() client.Object { return &kustomizev1.Kustomization{} }, manages: (&flux.Kustomizations{}).Manages,
	},
	{
		kind: helmv2.HelmReleaseKind, nameLabel: helm.HelmReleaseNameLabel, namespaceLabel: helm.HelmReleaseNamespaceLabel,
		object: func() client.Object { return &helmv2.HelmRelease{} }, manages: (&helm.HelmReleases{}).Manages,
	},
}

// sourceOf is the GitOps object that applies live: the one of its newest
// proposal, or the one the tools' labels name and whose record confirms it.
func sourceOf(ctx context.Context, r client.Reader, store *proposal.Store, live *appsv1.StatefulSet) (v1alpha1.Source, []string, error) {
	if p, ok := store.Get(keyOf(live)); ok {
		return p.Source, p.IgnoredLabels, nil
	}
	for _, o := range owners {
		name := live.Labels[o.nameLabel]
		if name == "" {
			continue
		}
		key := types.NamespacedName{Namespace: live.Labels[o.namespaceLabel], Name: name}
		obj := o.object()
		if err := r.Get(ctx, key, obj); err != nil {
			return v1alpha1.Source{}, nil, fmt.Errorf("its label %s names %s %s: %w", o.nameLabel, o.kind, key, err)
		}
		if err := o.manages(ctx, obj, live); err != nil {
			return v1alpha1.Source{}, nil, fmt.Errorf("its labels name %s %s, which does not apply it: %w", o.kind, key, err)
		}
		return v1alpha1.Source{Kind: o.kind, Namespace: key.Namespace, Name: key.Name}, nil, nil
	}
	return v1alpha1.Source{}, nil, fmt.Errorf("no Flux Kustomization or HelmRelease applies it (labels %s, %s): there is no repository to propose a resize to",
		flux.LabelKustomizationName, helm.HelmReleaseNameLabel)
}
