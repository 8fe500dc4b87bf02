// Package argocd turns Argo CD syncs that fail on a StatefulSet's immutable
// volumeClaimTemplates into proposals for the rollout controller, and after
// the convergence asks Argo CD to sync again.
//
// Applications are read as unstructured objects and converted into the few
// fields below: the argo-cd module needs a newer Go than this project, and a
// mirror of what is read keeps the integration independent of its release.
package argocd

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ApplicationKind is the Source kind of proposals from Argo CD.
const ApplicationKind = "Application"

// ApplicationGVK is the Argo CD Application kind watched.
var ApplicationGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: ApplicationKind}

// Argo CD's status codes (pkg/apis/application/v1alpha1 and gitops-engine's
// sync/common) that the integration compares against.
const (
	syncStatusOutOfSync = "OutOfSync"
	syncStatusSynced    = "Synced"
	resultSyncFailed    = "SyncFailed"
	phaseRunning        = "Running"
	phaseTerminating    = "Terminating"
)

// application mirrors the fields of argoproj.io/v1alpha1 Application read here.
type application struct {
	Spec      appSpec    `json:"spec"`
	Status    appStatus  `json:"status"`
	Operation *operation `json:"operation,omitempty"`
}

type appSpec struct {
	// Project is the AppProject's name; Argo CD reads "" as "default".
	Project     string         `json:"project,omitempty"`
	Destination appDestination `json:"destination"`
	Source      *appSource     `json:"source,omitempty"`
	Sources     []appSource    `json:"sources,omitempty"`
	SyncPolicy  *syncPolicy    `json:"syncPolicy,omitempty"`
}

// appDestination is where an Application applies: a cluster by server
// URL or by name, and the namespace of its namespaced resources.
type appDestination struct {
	Server    string `json:"server,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

type appSource struct {
	RepoURL        string         `json:"repoURL"`
	Path           string         `json:"path,omitempty"`
	TargetRevision string         `json:"targetRevision,omitempty"`
	Chart          string         `json:"chart,omitempty"`
	Ref            string         `json:"ref,omitempty"`
	Kustomize      *kustomizeSpec `json:"kustomize,omitempty"`
	Helm           *helmSpec      `json:"helm,omitempty"`
}

// helmSpec is what a Helm source renders with.
type helmSpec struct {
	ValueFiles   []string         `json:"valueFiles,omitempty"`
	Values       string           `json:"values,omitempty"`
	ValuesObject *json.RawMessage `json:"valuesObject,omitempty"`
	ReleaseName  string           `json:"releaseName,omitempty"`
}

type kustomizeSpec struct {
	CommonLabels map[string]string `json:"commonLabels,omitempty"`
}

type syncPolicy struct {
	Automated *automatedPolicy `json:"automated,omitempty"`
}

type automatedPolicy struct {
	Prune   *bool `json:"prune,omitempty"`
	Enabled *bool `json:"enabled,omitempty"`
}

type appStatus struct {
	Sync           syncStatus       `json:"sync"`
	Resources      []resourceStatus `json:"resources,omitempty"`
	OperationState *operationState  `json:"operationState,omitempty"`
}

type syncStatus struct {
	Status    string   `json:"status"`
	Revision  string   `json:"revision,omitempty"`
	Revisions []string `json:"revisions,omitempty"`
}

type resourceStatus struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Status    string `json:"status,omitempty"`
}

type operation struct {
	Sync *syncOperation `json:"sync,omitempty"`
}

type syncOperation struct {
	Revision  string   `json:"revision,omitempty"`
	Revisions []string `json:"revisions,omitempty"`
}

type operationState struct {
	Operation  operation   `json:"operation"`
	Phase      string      `json:"phase"`
	Message    string      `json:"message,omitempty"`
	SyncResult *syncResult `json:"syncResult,omitempty"`
}

type syncResult struct {
	Revision  string           `json:"revision"`
	Revisions []string         `json:"revisions,omitempty"`
	Resources []resourceResult `json:"resources,omitempty"`
}

type resourceResult struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status,omitempty"`
	Message   string `json:"message,omitempty"`
}

// applicationOf converts the fields of u read here; unknown fields are
// ignored, so newer Argo CD releases convert too.
func applicationOf(u *unstructured.Unstructured) (*application, error) {
	app := &application{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, app); err != nil {
		return nil, err
	}
	return app, nil
}
