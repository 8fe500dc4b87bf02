package argoenv

import (
	"cmp"
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplicationGVK is Argo CD's Application kind.
var ApplicationGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}

const (
	// InClusterServer is the destination of the cluster Argo CD runs in; with
	// ARGOCD_FAKE_IN_CLUSTER it is the testenv API server.
	InClusterServer = "https://kubernetes.default.svc"
	// refreshAnnotation asks the controller for a refresh; "hard" also drops the
	// repo-server's cached manifests and revisions.
	refreshAnnotation = "argocd.argoproj.io/refresh"
)

// AppSpec describes an Application of plain manifests or a Helm chart in one
// Git directory, deployed to the in-cluster destination in project "default".
type AppSpec struct {
	Name string
	// Namespace is the Application's own namespace; empty means Argo CD's.
	// Another one must be among Options.ApplicationNamespaces.
	Namespace string
	RepoURL   string
	// Path is the directory in the repository; empty means the root.
	Path string
	// TargetRevision is a branch, tag or commit; empty means HEAD.
	TargetRevision string
	// DestNamespace is where namespaced objects without a namespace go.
	DestNamespace string
	// Automated turns on automated sync (no prune, no self-heal).
	Automated bool
	// SyncOptions are syncPolicy.syncOptions, e.g. "CreateNamespace=true".
	SyncOptions []string
	// HelmValues, when not nil, makes the source a Helm chart (the directory
	// holds Chart.yaml) rendered with these values over the chart's own
	// (spec.source.helm.valuesObject; the release is named after the
	// Application). Values are JSON-like, as unstructured objects need:
	// string, bool, int64, float64, []any, map[string]any.
	HelmValues map[string]any
}

// Application returns s as an Application in s.Namespace or a's namespace,
// ready to Create.
func (a *ArgoCD) Application(s AppSpec) *unstructured.Unstructured {
	path, rev := s.Path, s.TargetRevision
	if path == "" {
		path = "."
	}
	if rev == "" {
		rev = "HEAD"
	}
	policy := map[string]any{}
	if s.Automated {
		policy["automated"] = map[string]any{}
	}
	if len(s.SyncOptions) > 0 {
		opts := make([]any, len(s.SyncOptions))
		for i, o := range s.SyncOptions {
			opts[i] = o
		}
		policy["syncOptions"] = opts
	}
	source := map[string]any{"repoURL": s.RepoURL, "path": path, "targetRevision": rev}
	if s.HelmValues != nil {
		source["helm"] = map[string]any{"valuesObject": runtime.DeepCopyJSON(s.HelmValues)}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"project":     DefaultProject,
			"source":      source,
			"destination": map[string]any{"server": InClusterServer, "namespace": s.DestNamespace},
			"syncPolicy":  policy,
		},
	}}
	u.SetGroupVersionKind(ApplicationGVK)
	u.SetNamespace(cmp.Or(s.Namespace, a.Namespace))
	u.SetName(s.Name)
	return u
}

// HardRefresh annotates Application ns/name with argocd.argoproj.io/refresh=hard:
// the controller then re-resolves the revision and regenerates the manifests at
// once instead of at its next resync (with the repo-server's cached revision,
// which lags a push by minutes). The controller removes the annotation when done.
func (a *ArgoCD) HardRefresh(ctx context.Context, c client.Client, ns, name string) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ApplicationGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	patch := []byte(`{"metadata":{"annotations":{"` + refreshAnnotation + `":"hard"}}}`)
	if err := c.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("hard refresh of Application %s/%s: %w", ns, name, err)
	}
	return nil
}

// AppStatus is the part of an Application's status tests look at.
type AppStatus struct {
	// Sync is status.sync.status: Synced, OutOfSync or Unknown.
	Sync string
	// Revision is status.sync.revision, the commit compared with the cluster.
	Revision string
	// Health is status.health.status: Healthy, Progressing, Degraded...
	Health string
	// OperationPhase and OperationMessage are status.operationState's phase
	// (Running, Succeeded, Failed, Error) and message.
	OperationPhase, OperationMessage string
}

// Status reads app's AppStatus; absent fields are "".
func Status(app *unstructured.Unstructured) AppStatus {
	s := func(fields ...string) string {
		v, _, _ := unstructured.NestedString(app.Object, append([]string{"status"}, fields...)...)
		return v
	}
	return AppStatus{
		Sync:             s("sync", "status"),
		Revision:         s("sync", "revision"),
		Health:           s("health", "status"),
		OperationPhase:   s("operationState", "phase"),
		OperationMessage: s("operationState", "message"),
	}
}

func (s AppStatus) String() string {
	return fmt.Sprintf("sync %q at %q, health %q, operation %q: %q", s.Sync, s.Revision, s.Health, s.OperationPhase, s.OperationMessage)
}

// WaitApp polls Application ns/name until cond holds and returns it. It fails at
// once if an Argo CD program has exited, and at ctx's end with the last status
// seen (or the last error reading it), so a timeout says what Argo CD was doing.
func (a *ArgoCD) WaitApp(ctx context.Context, c client.Client, ns, name string, cond func(*unstructured.Unstructured) bool) (*unstructured.Unstructured, error) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		if err := a.Exited(); err != nil {
			return nil, err
		}
		app := &unstructured.Unstructured{}
		app.SetGroupVersionKind(ApplicationGVK)
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app)
		switch {
		case err == nil:
			if cond(app) {
				return app, nil
			}
			last = Status(app).String()
		case apierrors.IsNotFound(err):
			last = "not found"
		case ctx.Err() == nil:
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("argoenv: Application %s/%s: condition not met: %w; last: %s", ns, name, ctx.Err(), last)
		case <-tick.C:
		}
	}
}
