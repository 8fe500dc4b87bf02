package argocd

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultControlPlaneNamespace is where Argo CD keeps its AppProjects and
// argocd-cm unless installed elsewhere.
const DefaultControlPlaneNamespace = "argocd"

// settingsConfigMap is Argo CD's settings ConfigMap (util/settings).
const settingsConfigMap = "argocd-cm"

// Keys of argocd-cm read here, as util/settings names them.
const (
	keyImpersonationEnabled  = "application.sync.impersonation.enabled"
	keyImpersonationEnforced = "application.sync.impersonation.enforced"
	keyTrackingMethod        = "application.resourceTrackingMethod"
	keyInstallationID        = "installationID"
	keyGlobalProjects        = "globalProjects"
)

// trackingLabel is the tracking method (v1alpha1.TrackingMethodLabel) that
// records an Application in a label only: no tracking-id annotation.
const trackingLabel = "label"

// settings are what argocd-cm says about how Argo CD applies.
type settings struct {
	// impersonation: syncs apply as the project's destination service
	// account (IsImpersonationEnabled: exactly "true").
	impersonation bool
	// enforced: with impersonation, an Application no destination service
	// account matches is not synced; otherwise it is synced as the
	// controller (IsImpersonationEnforced: anything but "false").
	enforced bool
	// trackingMethod is "" for Argo CD's default, annotation.
	trackingMethod string
	installationID string
	// globalProjects is set when projects inherit from global ones.
	globalProjects bool
}

// settingsOf reads the keys of argocd-cm's data that matter here.
func settingsOf(data map[string]string) settings {
	return settings{
		impersonation:  data[keyImpersonationEnabled] == "true",
		enforced:       data[keyImpersonationEnforced] != "false",
		trackingMethod: data[keyTrackingMethod],
		installationID: data[keyInstallationID],
		globalProjects: data[keyGlobalProjects] != "",
	}
}

// settings reads argocd-cm uncached, for the same reason as project. Argo
// CD cannot sync without it either, so a missing one is an error.
func (r *Applications) settings(ctx context.Context) (settings, error) {
	key := types.NamespacedName{Namespace: r.controlPlane, Name: settingsConfigMap}
	var cm corev1.ConfigMap
	if err := r.reader.Get(ctx, key, &cm); err != nil {
		return settings{}, fmt.Errorf("reading Argo CD's settings ConfigMap %s: %w", key, err)
	}
	return settingsOf(cm.Data), nil
}
