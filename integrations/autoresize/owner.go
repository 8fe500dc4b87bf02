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
)

// owner is a GitOps tool as autoresize finds it from a StatefulSet at
// rest: the labels it puts on what it applies name the tool object, and
// the tool's own record of what it applies (source.Tool's Manages) must
// confirm it. Labels are the tenant's to write; the record is the tool's.
type owner struct {
	kind                      string
	nameLabel, namespaceLabel string
	object                    func() client.Object
	tool                      interface {
		Manages(ctx context.Context, obj client.Object, live *appsv1.StatefulSet) error
		Authority(ctx context.Context, obj client.Object) (*v1alpha1.Identity, error)
	}
}

// owners are the tools autoresize proposes for, locked down as the Flux
// controllers are (--default-service-account). Their Manages and
// Authority read only obj, live and that account.
func owners(defaultServiceAccount string) []owner {
	return []owner{
		{
			kind: kustomizev1.KustomizationKind, nameLabel: flux.LabelKustomizationName, namespaceLabel: flux.LabelKustomizationNamespace,
			object: func() client.Object { return &kustomizev1.Kustomization{} },
			tool:   &flux.Kustomizations{DefaultServiceAccount: defaultServiceAccount},
		},
		{
			kind: helmv2.HelmReleaseKind, nameLabel: helm.HelmReleaseNameLabel, namespaceLabel: helm.HelmReleaseNamespaceLabel,
			object: func() client.Object { return &helmv2.HelmRelease{} },
			tool:   &helm.HelmReleases{DefaultServiceAccount: defaultServiceAccount},
		},
	}
}

// source is the GitOps object that applies a StatefulSet, and what its
// proposal carries.
type source struct {
	v1alpha1.Source
	// IgnoredLabels are the proposal's template labels never copied onto
	// claims; Authority the identity the tool applies as (nil: as itself).
	IgnoredLabels []string
	Authority     *v1alpha1.Identity
}

// sourceOf is the GitOps object that applies live: the one of its newest
// proposal, or the one the tools' labels name and whose record confirms it.
func (c *Controller) sourceOf(ctx context.Context, live *appsv1.StatefulSet) (source, error) {
	if p, ok := c.Proposals.Get(keyOf(live)); ok {
		return source{Source: p.Source, IgnoredLabels: p.IgnoredLabels, Authority: p.Authority}, nil
	}
	for _, o := range owners(c.DefaultServiceAccount) {
		name := live.Labels[o.nameLabel]
		if name == "" {
			continue
		}
		key := types.NamespacedName{Namespace: live.Labels[o.namespaceLabel], Name: name}
		obj := o.object()
		if err := c.Reader.Get(ctx, key, obj); err != nil {
			return source{}, fmt.Errorf("its label %s names %s %s: %w", o.nameLabel, o.kind, key, err)
		}
		if err := o.tool.Manages(ctx, obj, live); err != nil {
			return source{}, fmt.Errorf("its labels name %s %s, which does not apply it: %w", o.kind, key, err)
		}
		id, err := o.tool.Authority(ctx, obj)
		if err != nil {
			return source{}, err
		}
		return source{Source: v1alpha1.Source{Kind: o.kind, Namespace: key.Namespace, Name: key.Name}, Authority: id}, nil
	}
	return source{}, fmt.Errorf("no Flux Kustomization or HelmRelease applies it (labels %s, %s): there is no repository to propose a resize to",
		flux.LabelKustomizationName, helm.HelmReleaseNameLabel)
}
