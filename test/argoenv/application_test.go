package argoenv

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestApplication checks the fields Argo CD reads from a constructed Application,
// and the defaults for path and revision.
func TestApplication(t *testing.T) {
	a := &ArgoCD{Namespace: "argocd"}
	app := a.Application(AppSpec{Name: "shop", RepoURL: "http://git/shop.git", DestNamespace: "shop", Automated: true, SyncOptions: []string{"CreateNamespace=true"}})
	if app.GroupVersionKind() != ApplicationGVK || app.GetNamespace() != "argocd" || app.GetName() != "shop" {
		t.Errorf("Application %s %s/%s, want %s argocd/shop", app.GroupVersionKind(), app.GetNamespace(), app.GetName(), ApplicationGVK)
	}
	for path, want := range map[string]any{
		"spec.project":                "default",
		"spec.source.repoURL":         "http://git/shop.git",
		"spec.source.path":            ".",
		"spec.source.targetRevision":  "HEAD",
		"spec.destination.server":     InClusterServer,
		"spec.destination.namespace":  "shop",
		"spec.syncPolicy.automated":   map[string]any{},
		"spec.syncPolicy.syncOptions": []any{"CreateNamespace=true"},
	} {
		got, ok, err := unstructured.NestedFieldNoCopy(app.Object, strings.Split(path, ".")...)
		if err != nil || !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("Application %s = %#v (found %v, %v), want %#v", path, got, ok, err, want)
		}
	}

	manual := a.Application(AppSpec{Name: "manual", RepoURL: "http://git/shop.git", Path: "apps", TargetRevision: "main"})
	if _, ok, _ := unstructured.NestedFieldNoCopy(manual.Object, "spec", "syncPolicy", "automated"); ok {
		t.Error("Application without Automated has spec.syncPolicy.automated")
	}
	if p, _, _ := unstructured.NestedString(manual.Object, "spec", "source", "path"); p != "apps" {
		t.Errorf("Application spec.source.path %q, want apps", p)
	}

	if _, ok, _ := unstructured.NestedFieldNoCopy(app.Object, "spec", "source", "helm"); ok {
		t.Error("Application without HelmValues has spec.source.helm")
	}
	values := map[string]any{"replicas": int64(2), "claimLabels": map[string]any{"team": "storage"}}
	chart := a.Application(AppSpec{Name: "chart", RepoURL: "http://git/shop.git", Path: "charts/web", HelmValues: values})
	got, _, _ := unstructured.NestedFieldNoCopy(chart.Object, "spec", "source", "helm", "valuesObject")
	if !reflect.DeepEqual(got, values) {
		t.Errorf("Application spec.source.helm.valuesObject = %#v, want %#v", got, values)
	}
	values["replicas"] = int64(3)
	if r, _, _ := unstructured.NestedInt64(chart.Object, "spec", "source", "helm", "valuesObject", "replicas"); r != 2 {
		t.Errorf("Application valuesObject.replicas %d after the caller changed its map, want 2: the values are not copied", r)
	}

	elsewhere := a.Application(AppSpec{Name: "team", Namespace: "apps-team", RepoURL: "http://git/shop.git"})
	if elsewhere.GetNamespace() != "apps-team" {
		t.Errorf("Application with Namespace apps-team is in namespace %q", elsewhere.GetNamespace())
	}
}

// TestDefaultProject checks the default AppProject Start creates for
// ApplicationNamespaces: argocd-server's own, plus sourceNamespaces.
func TestDefaultProject(t *testing.T) {
	p := defaultProject("argocd", []string{"apps-team", "apps-ops"})
	if p.GroupVersionKind() != AppProjectGVK || p.GetNamespace() != "argocd" || p.GetName() != DefaultProject {
		t.Errorf("AppProject %s %s/%s, want %s argocd/%s", p.GroupVersionKind(), p.GetNamespace(), p.GetName(), AppProjectGVK, DefaultProject)
	}
	for path, want := range map[string]any{
		"spec.sourceRepos":              []any{"*"},
		"spec.destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
		"spec.clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		"spec.sourceNamespaces":         []any{"apps-team", "apps-ops"},
	} {
		got, ok, err := unstructured.NestedFieldNoCopy(p.Object, strings.Split(path, ".")...)
		if err != nil || !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("AppProject %s = %#v (found %v, %v), want %#v", path, got, ok, err, want)
		}
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(defaultProject("argocd", nil).Object, "spec", "sourceNamespaces"); ok {
		t.Error("AppProject without source namespaces has spec.sourceNamespaces")
	}
}

// TestStatus reads the fields tests wait on from an Application's status.
func TestStatus(t *testing.T) {
	app := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
		"sync":           map[string]any{"status": "OutOfSync", "revision": "abc"},
		"health":         map[string]any{"status": "Progressing"},
		"operationState": map[string]any{"phase": "Running", "message": "field is immutable"},
	}}}
	want := AppStatus{Sync: "OutOfSync", Revision: "abc", Health: "Progressing", OperationPhase: "Running", OperationMessage: "field is immutable"}
	if got := Status(app); got != want {
		t.Errorf("Status = %+v, want %+v", got, want)
	}
	if got := Status(&unstructured.Unstructured{Object: map[string]any{}}); got != (AppStatus{}) {
		t.Errorf("Status of an Application without status = %+v, want zero", got)
	}
}

// TestDecodeState covers the states Argo CD sends for an absent object.
func TestDecodeState(t *testing.T) {
	for _, s := range []string{"", "null"} {
		if u, err := decodeState(s); u != nil || err != nil {
			t.Errorf("decodeState(%q) = %v, %v; want nil, nil", s, u, err)
		}
	}
	u, err := decodeState(`{"kind":"StatefulSet","metadata":{"name":"web"}}`)
	if err != nil || u.GetKind() != "StatefulSet" || u.GetName() != "web" {
		t.Errorf("decodeState(StatefulSet web) = %v, %v", u, err)
	}
	if _, err := decodeState(`{`); err == nil {
		t.Error("decodeState of broken JSON: no error")
	}
}
