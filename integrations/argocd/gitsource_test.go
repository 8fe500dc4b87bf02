package argocd

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func app(spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(ApplicationGVK)
	u.SetNamespace("argocd")
	u.SetName("shop")
	return u
}

// The one Git source of an Application, with its chart's values files and
// release; what no file edit can change is refused, saying why.
func TestGitSourceOf(t *testing.T) {
	g, err := gitSourceOf(app(map[string]any{
		"destination": map[string]any{"namespace": "shop"},
		"source": map[string]any{"repoURL": "https://git.example.com/acme/fleet.git", "targetRevision": "main", "path": "charts/db",
			"helm": map[string]any{"valueFiles": []any{"values-prod.yaml"}, "releaseName": "db"}},
	}))
	if err != nil || g.RepoURL != "https://git.example.com/acme/fleet.git" || g.TargetRevision != "main" || g.Path != "charts/db" ||
		strings.Join(g.HelmValueFiles, ",") != "values-prod.yaml" || g.HelmInlineValues || g.Release != (types.NamespacedName{Namespace: "shop", Name: "db"}) {
		t.Errorf("gitSourceOf = %+v, %v", g, err)
	}
	g, err = gitSourceOf(app(map[string]any{"source": map[string]any{"repoURL": "r", "helm": map[string]any{"valuesObject": map[string]any{"size": "1Gi"}}}}))
	if err != nil || !g.HelmInlineValues || g.Release.Name != "shop" {
		t.Errorf("inline values: %+v, %v", g, err)
	}
	for what, spec := range map[string]map[string]any{
		"spec.sources":    {"sources": []any{map[string]any{"repoURL": "a"}, map[string]any{"repoURL": "b"}}},
		"Helm repository": {"source": map[string]any{"repoURL": "https://charts.example.com", "chart": "db"}},
		"no spec.source":  {},
	} {
		if _, err := gitSourceOf(app(spec)); err == nil || !strings.Contains(err.Error(), strings.Fields(what)[0]) {
			t.Errorf("%s: %v, want refused naming it", what, err)
		}
	}
}

// The tracking-id names the Application: qualified by its namespace
// outside the control plane's, unqualified in it.
func TestTrackedApplication(t *testing.T) {
	sts := func(id string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: map[string]string{annotationTrackingID: id}}}
	}
	for id, want := range map[string]types.NamespacedName{
		"shop:apps/StatefulSet:shop/web":        {Namespace: "argocd", Name: "shop"},
		"team-a_shop:apps/StatefulSet:shop/web": {Namespace: "team-a", Name: "shop"},
	} {
		if got, ok := trackedApplication(sts(id), "argocd"); !ok || got != want {
			t.Errorf("%q: %v, %v; want %v", id, got, ok, want)
		}
	}
	if _, ok := trackedApplication(sts("not a tracking id"), "argocd"); ok {
		t.Error("a malformed tracking-id names an Application")
	}
	if _, ok := trackedApplication(&appsv1.StatefulSet{}, "argocd"); ok {
		t.Error("no tracking-id names an Application")
	}
}
