package autoresize

import (
	"context"
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/argocd"
	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/integrations/helm"
)

// Owner is a GitOps tool as autoresize finds it from a StatefulSet at
// rest: what the StatefulSet says applies it (the tool's labels or
// tracking annotation, which the tenant writes) names the tool object, and
// the tool's own record of what it applies (source.Tool's Manages) must
// confirm it.
type Owner struct {
	Kind string
	// Find names the tool object the StatefulSet says applies it; false
	// when it names none.
	Find      func(live metav1.Object) (types.NamespacedName, bool)
	NewObject func() client.Object
	Tool      interface {
		Manages(ctx context.Context, obj client.Object, live *appsv1.StatefulSet) error
		Authority(ctx context.Context, obj client.Object) (*v1alpha1.Identity, error)
	}
}

// FluxOwners are Flux's Kustomizations and HelmReleases, locked down as
// the Flux controllers are (--default-service-account). Their Manages and
// Authority read only obj, live and that account, and a HelmRelease's
// release record, with reader, at most maxReleaseBytes unpacked (0: the
// default).
func FluxOwners(reader client.Reader, defaultServiceAccount string, maxReleaseBytes int64) []Owner {
	return []Owner{
		{
			Kind:      kustomizev1.KustomizationKind,
			Find:      labelled(flux.LabelKustomizationName, flux.LabelKustomizationNamespace),
			NewObject: func() client.Object { return &kustomizev1.Kustomization{} },
			Tool:      &flux.Kustomizations{DefaultServiceAccount: defaultServiceAccount},
		},
		{
			Kind:      helmv2.HelmReleaseKind,
			Find:      labelled(helm.HelmReleaseNameLabel, helm.HelmReleaseNamespaceLabel),
			NewObject: func() client.Object { return &helmv2.HelmRelease{} },
			Tool:      helmAtRest{&helm.HelmReleases{Reader: reader, DefaultServiceAccount: defaultServiceAccount, MaxReleaseBytes: maxReleaseBytes}},
		},
	}
}

// helmAtRest is helm-controller for StatefulSets at rest: the labels that
// name a HelmRelease are the StatefulSet's writer's, so its release record
// must hold the StatefulSet, in its own namespace (ManagesAtRest).
type helmAtRest struct{ *helm.HelmReleases }

func (h helmAtRest) Manages(ctx context.Context, obj client.Object, live *appsv1.StatefulSet) error {
	return h.ManagesAtRest(ctx, obj, live)
}

// ArgoCDOwner is Argo CD's Applications, found by the tracking-id
// annotation; tool is the integration's (its Manages reads the AppProject
// and argocd-cm of the control plane's namespace).
func ArgoCDOwner(tool *argocd.Applications, controlPlane string) Owner {
	return Owner{
		Kind: argocd.ApplicationKind,
		Find: func(live metav1.Object) (types.NamespacedName, bool) {
			return argocd.TrackedApplication(live, controlPlane)
		},
		NewObject: tool.NewObject,
		Tool:      tool,
	}
}

// labelled finds the tool object named by labels name and namespace.
func labelled(name, namespace string) func(metav1.Object) (types.NamespacedName, bool) {
	return func(live metav1.Object) (types.NamespacedName, bool) {
		n := live.GetLabels()[name]
		return types.NamespacedName{Namespace: live.GetLabels()[namespace], Name: n}, n != ""
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
	// Object is the tool object as read to confirm it applies the
	// StatefulSet; nil for a proposal's source (Locate reads it then).
	Object client.Object
}

// sourceOf is the GitOps object that applies live: the one of its newest
// proposal, or the one the StatefulSet names whose tool's record confirms it.
func (c *Controller) sourceOf(ctx context.Context, live *appsv1.StatefulSet) (source, error) {
	if p, ok := c.Proposals.Get(keyOf(live)); ok {
		return source{Source: p.Source, IgnoredLabels: p.IgnoredLabels, Authority: p.Authority}, nil
	}
	var kinds []string
	for _, o := range c.Owners {
		kinds = append(kinds, o.Kind)
		key, ok := o.Find(live)
		if !ok {
			continue
		}
		obj := o.NewObject()
		if err := c.Reader.Get(ctx, key, obj); err != nil {
			return source{}, fmt.Errorf("it names %s %s: %w", o.Kind, key, err)
		}
		if err := o.Tool.Manages(ctx, obj, live); err != nil {
			return source{}, fmt.Errorf("it names %s %s, which does not apply it: %w", o.Kind, key, err)
		}
		id, err := o.Tool.Authority(ctx, obj)
		if err != nil {
			return source{}, err
		}
		return source{Source: v1alpha1.Source{Kind: o.Kind, Namespace: key.Namespace, Name: key.Name}, Authority: id, Object: obj}, nil
	}
	return source{}, fmt.Errorf("no %s applies it: there is no repository to propose a resize to", strings.Join(kinds, ", "))
}
