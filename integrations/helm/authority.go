package helm

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/authority"
)

// Authority implements source.Tool: helm-controller releases a HelmRelease
// as its spec.serviceAccountName, or, locked down with
// --default-service-account, as that account of the HelmRelease's
// namespace; otherwise as itself (nil).
func (h *HelmReleases) Authority(ctx context.Context, obj client.Object) (*v1alpha1.Identity, error) {
	hr := obj.(*helmv2.HelmRelease)
	if sa := authority.ServiceAccountOr(hr.Namespace, hr.Spec.ServiceAccountName, h.DefaultServiceAccount); sa != nil || hr.Spec.KubeConfig == nil {
		// With a kubeConfig too: helm-controller impersonates the account
		// of that name on the remote cluster (fluxcd/pkg runtime/client).
		return sa, nil
	}
	// helm-controller releases as whoever the tenant's kubeconfig is.
	remote, err := h.remote(ctx, hr)
	if err != nil {
		return nil, err
	}
	return remote.Identity(ctx)
}

// Manages implements source.Tool: the live StatefulSet is the HelmRelease's
// when Helm's ownership annotations name its release and helm-controller's
// labels name the HelmRelease; only someone who may already edit that
// StatefulSet can set them, whatever a release record or chart says.
func (*HelmReleases) Manages(_ context.Context, obj client.Object, live *appsv1.StatefulSet) error {
	hr := obj.(*helmv2.HelmRelease)
	if err := releaseOwns(live, hr.GetReleaseName(), hr.GetReleaseNamespace()); err != nil {
		return err
	}
	if live.Labels[HelmReleaseNameLabel] != hr.Name || live.Labels[HelmReleaseNamespaceLabel] != hr.Namespace {
		return fmt.Errorf("the live StatefulSet's labels %s=%q and %s=%q do not name HelmRelease %s/%s",
			HelmReleaseNameLabel, live.Labels[HelmReleaseNameLabel], HelmReleaseNamespaceLabel, live.Labels[HelmReleaseNamespaceLabel], hr.Namespace, hr.Name)
	}
	return nil
}

// ManagesAtRest is Manages for a StatefulSet no failed release proposes
// (autoresize's, at rest): its labels and annotations are whatever its
// writer set, so the HelmRelease's own record must confirm them. It
// releases to the cluster live was read in (spec.kubeConfig), its release
// namespace is the StatefulSet's (a tenant's StatefulSet never reaches
// another namespace's HelmRelease), and the newest release's record, read
// as Desired reads it (on that cluster), holds the StatefulSet.
func (h *HelmReleases) ManagesAtRest(ctx context.Context, obj client.Object, cluster string, live *appsv1.StatefulSet) error {
	hr := obj.(*helmv2.HelmRelease)
	remote, err := h.remote(ctx, hr)
	if err != nil {
		return err
	}
	if err := remote.AppliesIn("the HelmRelease "+hr.Namespace+"/"+hr.Name, cluster); err != nil {
		return err
	}
	if err := h.Manages(ctx, obj, live); err != nil {
		return err
	}
	if ns := hr.GetReleaseNamespace(); ns != live.Namespace {
		return fmt.Errorf("HelmRelease %s/%s releases into namespace %s, not %s", hr.Namespace, hr.Name, ns, live.Namespace)
	}
	latest := hr.Status.History.Latest()
	if latest == nil {
		return fmt.Errorf("HelmRelease %s/%s has no release yet", hr.Namespace, hr.Name)
	}
	rel, err := h.record(ctx, h.recordsOf(remote), hr, latest)
	if err != nil {
		return err
	}
	stss, err := StatefulSets(rel)
	if err != nil {
		return fmt.Errorf("HelmRelease %s/%s: %w", hr.Namespace, hr.Name, err)
	}
	for _, s := range stss {
		if s.Namespace == live.Namespace && s.Name == live.Name {
			return nil
		}
	}
	return fmt.Errorf("release %s.v%d of HelmRelease %s/%s holds no StatefulSet %s/%s", latest.Name, latest.Version, hr.Namespace, hr.Name, live.Namespace, live.Name)
}

// Authority implements source.Tool: whoever ran `helm upgrade` is not
// known; a release's authority is its namespace and the objects it owns
// (Manages).
func (*CLIReleases) Authority(context.Context, client.Object) (*v1alpha1.Identity, error) {
	return nil, nil
}

// Manages implements source.Tool: a release recorded in a namespace
// manages the StatefulSets of that namespace whose Helm ownership
// annotations name it there, unless helm-controller's label says a
// HelmRelease made it (that source's, which knows its commit). Everything
// is read from the Secret's own namespace and labels and the live object,
// never from the record a writer of Secrets can forge.
func (*CLIReleases) Manages(_ context.Context, obj client.Object, live *appsv1.StatefulSet) error {
	rec, ok := labelsOf(obj)
	if !ok {
		return fmt.Errorf("the Secret %s/%s is not a Helm release record", obj.GetNamespace(), obj.GetName())
	}
	if live.Namespace != obj.GetNamespace() {
		return fmt.Errorf("the Helm release %s is recorded in namespace %s, not %s", rec.name, obj.GetNamespace(), live.Namespace)
	}
	if hr := live.Labels[HelmReleaseNameLabel]; hr != "" {
		return fmt.Errorf("the live StatefulSet is Flux HelmRelease %s's (label %s)", hr, HelmReleaseNameLabel)
	}
	return releaseOwns(live, rec.name, obj.GetNamespace())
}

// releaseOwns says whether Helm's ownership annotations on the live
// StatefulSet name release of namespace.
func releaseOwns(live *appsv1.StatefulSet, release, namespace string) error {
	if live.Annotations[annotationReleaseName] != release || live.Annotations[annotationReleaseNamespace] != namespace {
		return fmt.Errorf("the live StatefulSet does not carry %s=%s and %s=%s", annotationReleaseName, release, annotationReleaseNamespace, namespace)
	}
	return nil
}

// crossNamespaceRefused is helm-controller's --no-cross-namespace-refs
// mirrored: a HelmRelease may not take its chart from another namespace.
func crossNamespaceRefused(hr *helmv2.HelmRelease, refused bool) error {
	ns := ""
	switch {
	case hr.Spec.Chart != nil:
		ns = hr.Spec.Chart.Spec.SourceRef.Namespace
	case hr.Spec.ChartRef != nil:
		ns = hr.Spec.ChartRef.Namespace
	}
	if err := toolkit.CrossNamespaceRefused(hr.Namespace, ns, refused); err != nil {
		return fmt.Errorf("HelmRelease %s/%s takes its chart from %w", hr.Namespace, hr.Name, err)
	}
	return nil
}
