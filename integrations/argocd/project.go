package argocd

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// AppProjectGVK is the Argo CD AppProject kind read for an Application's
// permissions.
var AppProjectGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "AppProject"}

// defaultProject is the AppProject of an Application naming none
// (ApplicationSpec.GetProject).
const defaultProject = "default"

// appProject mirrors the fields of argoproj.io/v1alpha1 AppProject that
// decide what an Application of the project may apply, and as whom.
type appProject struct {
	Spec projectSpec `json:"spec"`
}

type projectSpec struct {
	Destinations []projectDestination `json:"destinations,omitempty"`
	// NamespaceResourceWhitelist is nil when unset (everything allowed) and
	// empty when set to [] (nothing allowed), as in Argo CD.
	NamespaceResourceWhitelist []groupKind `json:"namespaceResourceWhitelist,omitempty"`
	NamespaceResourceBlacklist []groupKind `json:"namespaceResourceBlacklist,omitempty"`
	SourceNamespaces           []string    `json:"sourceNamespaces,omitempty"`
	// PermitOnlyProjectScopedClusters limits destinations to the clusters
	// registered for the project, which live in Secrets not read here.
	PermitOnlyProjectScopedClusters bool                        `json:"permitOnlyProjectScopedClusters,omitempty"`
	DestinationServiceAccounts      []destinationServiceAccount `json:"destinationServiceAccounts,omitempty"`
}

// projectDestination is an ApplicationDestination of a project: globs, each
// possibly a deny pattern ("!…").
type projectDestination struct {
	Server    string `json:"server,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

type groupKind struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
}

type destinationServiceAccount struct {
	Server                string `json:"server"`
	Namespace             string `json:"namespace,omitempty"`
	DefaultServiceAccount string `json:"defaultServiceAccount"`
}

// projectName is the AppProject app belongs to.
func (a *application) projectName() string {
	if a.Spec.Project == "" {
		return defaultProject
	}
	return a.Spec.Project
}

// project reads the AppProject name from Argo CD's control-plane
// namespace, uncached: a cache would watch every AppProject for a read per
// proposal, and a stale one would grant what the project no longer does.
func (r *Applications) project(ctx context.Context, name string) (*appProject, error) {
	key := types.NamespacedName{Namespace: r.controlPlane, Name: name}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(AppProjectGVK)
	if err := r.reader.Get(ctx, key, u); err != nil {
		return nil, fmt.Errorf("reading AppProject %s: %w", key, err)
	}
	return projectOf(u)
}

// projectOf converts the fields of u read here, as applicationOf does.
func projectOf(u *unstructured.Unstructured) (*appProject, error) {
	p := &appProject{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p); err != nil {
		return nil, fmt.Errorf("AppProject %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return p, nil
}
