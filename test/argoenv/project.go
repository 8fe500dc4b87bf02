package argoenv

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AppProjectGVK is Argo CD's AppProject kind.
var AppProjectGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "AppProject"}

// DefaultProject is the AppProject every Application of AppSpec belongs to.
const DefaultProject = "default"

// defaultProject is the "default" AppProject as argocd-server creates it at
// start-up when absent (server.initializeDefaultProject in v3.6.1: every
// repository, destination and cluster-scoped kind), with sourceNamespaces
// added when Applications may live outside Argo CD's namespace: without them
// the controller refuses such Applications ("application '<name>' in
// namespace '<ns>' is not permitted to use project 'default'").
func defaultProject(namespace string, sourceNamespaces []string) *unstructured.Unstructured {
	spec := map[string]any{
		"sourceRepos":              []any{"*"},
		"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
		"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
	}
	if len(sourceNamespaces) > 0 {
		ns := make([]any, len(sourceNamespaces))
		for i, n := range sourceNamespaces {
			ns[i] = n
		}
		spec["sourceNamespaces"] = ns
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(AppProjectGVK)
	u.SetNamespace(namespace)
	u.SetName(DefaultProject)
	return u
}

// installApplicationNamespaces prepares "applications in any namespace": the
// namespaces themselves (kept if they exist) and the default AppProject
// allowing them. The project is created before argocd-server starts, which
// then keeps it: patching the server's own afterwards would race with the
// controller's first look at it.
func (a *ArgoCD) installApplicationNamespaces(ctx context.Context) error {
	if len(a.ApplicationNamespaces) == 0 {
		return nil
	}
	for _, ns := range a.ApplicationNamespaces {
		err := a.kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create Namespace %s for Applications: %w", ns, err)
		}
	}
	p := defaultProject(a.Namespace, a.ApplicationNamespaces)
	if err := a.kube.Create(ctx, p); err != nil {
		return fmt.Errorf("create AppProject %s/%s: %w", p.GetNamespace(), p.GetName(), err)
	}
	return nil
}
