package helm

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The ownership metadata Helm (3.2 and later, and 4) sets on every object it
// applies, not stored in the release's manifest.
const (
	annotationReleaseName      = "meta.helm.sh/release-name"
	annotationReleaseNamespace = "meta.helm.sh/release-namespace"
	labelManagedBy             = "app.kubernetes.io/managed-by"
	managedByHelm              = "Helm"
)

// helmReleaseNameLabel is the label helm-controller's post-renderer puts on
// everything a HelmRelease applies (with the HelmRelease's name).
const helmReleaseNameLabel = "helm.toolkit.fluxcd.io/name"

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

// ownedBy reports whether the live StatefulSet key is release's of
// namespace by Helm's ownership annotations. One that does not exist is
// Helm's to create, not claimwarden's to converge, and reported owned: the
// proposal step skips it.
func ownedBy(ctx context.Context, r client.Reader, key types.NamespacedName, release, namespace string) (bool, error) {
	var live appsv1.StatefulSet
	if err := r.Get(ctx, key, &live); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("reading StatefulSet %s: %w", key, err)
	}
	return live.Annotations[annotationReleaseName] == release && live.Annotations[annotationReleaseNamespace] == namespace, nil
}
