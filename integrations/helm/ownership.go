package helm

import (
	appsv1 "k8s.io/api/apps/v1"
)

// The ownership metadata Helm (3.2 and later, and 4) sets on every object it
// applies, not stored in the release's manifest.
const (
	annotationReleaseName      = "meta.helm.sh/release-name"
	annotationReleaseNamespace = "meta.helm.sh/release-namespace"
	labelManagedBy             = "app.kubernetes.io/managed-by"
	managedByHelm              = "Helm"
)

// HelmReleaseNameLabel and HelmReleaseNamespaceLabel are the labels
// helm-controller's post-renderer puts on everything a HelmRelease
// applies, naming the HelmRelease.
const (
	HelmReleaseNameLabel      = "helm.toolkit.fluxcd.io/name"
	HelmReleaseNamespaceLabel = "helm.toolkit.fluxcd.io/namespace"
)

// withOwnership sets Helm's ownership metadata on sts as Helm does when it
// applies the manifest, so that a StatefulSet claimwarden re-creates from
// the manifest is still the release's to Helm (`helm upgrade` refuses to
// adopt an object without it) and to claimwarden.
func withOwnership(sts *appsv1.StatefulSet, release, namespace string) {
	if sts.Annotations == nil {
		sts.Annotations = map[string]string{}
	}
	sts.Annotations[annotationReleaseName] = release
	sts.Annotations[annotationReleaseNamespace] = namespace
	if sts.Labels == nil {
		sts.Labels = map[string]string{}
	}
	sts.Labels[labelManagedBy] = managedByHelm
}
