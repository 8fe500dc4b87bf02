package argocd

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Manages implements source.Tool: the live StatefulSet, read in the
// cluster of the Application's destination (source.Desired.Cluster), is
// the Application's when the Application applies it there.
func (r *Applications) Manages(ctx context.Context, obj client.Object, live *appsv1.StatefulSet) error {
	u, a, c, err := r.destination(obj)
	if err != nil {
		return err
	}
	return r.appliesIn(ctx, u, a, c, schema.GroupKind(statefulSetKind), live)
}

// Applies says why the Application app does not apply the live object of
// kind gk, read in the cluster claimwarden runs in, or nil: it does when
// the Application applies to this cluster and appliesIn says so.
func (r *Applications) Applies(ctx context.Context, app client.Object, gk schema.GroupKind, live metav1.Object) error {
	u, a, c, err := r.destination(app)
	if err != nil {
		return err
	}
	if c != local {
		return fmt.Errorf("it applies to cluster %s (%s), not this one (%s)", c.ArgoCDName, c.Server, inClusterName)
	}
	return r.appliesIn(ctx, u, a, c, gk, live)
}

// destination reads the Application obj and the cluster it applies to.
func (r *Applications) destination(obj client.Object) (*unstructured.Unstructured, *application, Cluster, error) {
	u := obj.(*unstructured.Unstructured)
	a, err := applicationOf(u)
	if err != nil {
		return nil, nil, Cluster{}, fmt.Errorf("the Application cannot be read: %w", err)
	}
	c, err := r.clusterOf(a.Spec.Destination)
	return u, a, c, err
}

// appliesIn says why the Application u does not apply the live object of
// kind gk in cluster c, or nil: it does when its AppProject permits the
// object there (as argocd-application-controller checks a live resource:
// IsAppNamespacePermitted, IsLiveResourcePermitted) and Argo CD's
// tracking-id on the live object names the Application and the object.
// Whatever cannot be read or is not understood refuses.
func (r *Applications) appliesIn(ctx context.Context, u *unstructured.Unstructured, a *application, c Cluster, gk schema.GroupKind, live metav1.Object) error {
	s, err := r.settings(ctx)
	if err != nil {
		return err
	}
	if err := understood(s); err != nil {
		return err
	}
	proj, err := r.project(ctx, a.projectName())
	if err != nil {
		return err
	}
	if err := projectPermits(proj.Spec, a.projectName(), u.GetNamespace(), r.controlPlane, groupKind(gk), c, live.GetNamespace()); err != nil {
		return err
	}
	return trackedBy(live, groupKind(gk), instanceName(u.GetNamespace(), u.GetName(), r.controlPlane), s.installationID)
}

// understood says why Argo CD's settings keep claimwarden from telling what
// an Application manages, or nil: label tracking leaves no tracking-id (a
// label any writer of the object can copy is no record), and global
// projects widen and narrow every project in ways not read here.
func understood(s settings) error {
	if s.trackingMethod == trackingLabel {
		return errors.New("label tracking (" + keyTrackingMethod + " in " + settingsConfigMap + ") records no tracking-id; claimwarden needs Argo CD's annotation tracking")
	}
	if s.globalProjects {
		return errors.New("global projects (" + keyGlobalProjects + " in " + settingsConfigMap + ") change every project in ways claimwarden does not evaluate")
	}
	return nil
}

// projectPermits says why the AppProject project does not let an
// Application in appNamespace apply an object of kind gk in namespace of
// cluster c, or nil.
func projectPermits(p projectSpec, project, appNamespace, controlPlane string, gk groupKind, c Cluster, namespace string) error {
	switch {
	case !appNamespacePermitted(p, appNamespace, controlPlane):
		return fmt.Errorf("AppProject %s does not allow Applications in namespace %s (sourceNamespaces)", project, appNamespace)
	case p.PermitOnlyProjectScopedClusters:
		return fmt.Errorf("AppProject %s permits only project-scoped clusters, whose Secrets claimwarden does not read", project)
	case !namespacedKindPermitted(p, gk):
		return fmt.Errorf("AppProject %s does not permit %s/%s (namespaceResourceWhitelist, namespaceResourceBlacklist)", project, gk.Group, gk.Kind)
	case !destinationPermitted(p.Destinations, c, namespace):
		return fmt.Errorf("AppProject %s has no destination for namespace %s of %s", project, namespace, c.Server)
	}
	return nil
}
