package argocd

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// An Argo CD targetRevision follows a branch, the default one for HEAD;
// a commit or a tag follows none.
func TestArgoBranch(t *testing.T) {
	for rev, want := range map[string]string{"": source.DefaultBranch, "HEAD": source.DefaultBranch, "main": "main", "refs/heads/prod": "prod", "release/1.x": "release/1.x"} {
		if got, err := argoBranch(rev); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", rev, got, err, want)
		}
	}
	for _, rev := range []string{"0123456789abcdef0123456789abcdef01234567", "refs/tags/v1"} {
		if _, err := argoBranch(rev); !errors.Is(err, source.ErrNoBranch) {
			t.Errorf("%q: %v, want ErrNoBranch", rev, err)
		}
	}
}

// An Application that sets Helm values itself is located where the
// Application that applies it (app of apps) reads from, with its chart
// read from its own source; without such a parent, from its own source.
func TestLocateThroughTheParentApplication(t *testing.T) {
	const rootProject = `
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {namespace: argocd, name: root}
spec:
  destinations: [{server: https://kubernetes.default.svc, namespace: argocd}]
`
	root := objectFrom(t, `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {namespace: argocd, name: root}
spec:
  project: root
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
  source: {repoURL: "https://git.example/fleet.git", path: ./apps/prod, targetRevision: refs/heads/prod}
`)
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "argocd-cm"}},
		objectFrom(t, rootProject), root).Build()
	apps := NewApplications(reader, nil, outcome.Recorder{}, false, "argocd")
	var tools source.Registry
	tools.Know(apps)
	child := func(trackingID string) *unstructured.Unstructured {
		u := objectFrom(t, `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {namespace: argocd, name: shop}
spec:
  project: root
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  source:
    repoURL: "https://git.example/shop.git"
    path: charts/shop
    targetRevision: HEAD
    helm: {valueFiles: [values-prod.yaml], valuesObject: {persistence: {size: 10Gi}}}
`)
		if trackingID != "" {
			u.SetAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": trackingID})
		}
		return u
	}
	ctx := context.Background()

	got, err := apps.Locate(ctx, child("root:argoproj.io/Application:argocd/shop"), tools.Parents(reader))
	if err != nil || got.Repository != "https://git.example/fleet.git" || got.Branch != "prod" || got.Dir != "apps/prod" ||
		got.Chart != "charts/shop" || strings.Join(got.ValuesFiles, ",") != "charts/shop/values-prod.yaml" ||
		got.ChartRepository != "https://git.example/shop.git" || got.ChartBranch != source.DefaultBranch ||
		got.Inline == nil || strings.Join(got.Inline.Field, ".") != "spec.source.helm.valuesObject" || len(got.HelmValues) != 1 {
		t.Errorf("an Application root applies: %+v, %v; want its manifest in fleet@prod under apps/prod, its chart in shop.git", got, err)
	}
	got, err = apps.Locate(ctx, child(""), tools.Parents(reader))
	if err != nil || got.Repository != "https://git.example/shop.git" || got.Dir != "charts/shop" || !got.DetectChart || got.Inline != nil || len(got.HelmValues) != 1 {
		t.Errorf("an Application no other applies: %+v, %v; want its own source, values rendered from its valuesObject", got, err)
	}
	if _, err := apps.Locate(ctx, child("other:argoproj.io/Application:argocd/shop"), tools.Parents(reader)); err == nil || !strings.Contains(err.Error(), "Application argocd/shop names Application argocd/other:") {
		t.Errorf("a tracking-id naming an Application that is not there: %v, want refused, naming it", err)
	}
}
