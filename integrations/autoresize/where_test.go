package autoresize

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// Where a tool reads its StatefulSets from, read from its objects on a real
// API server with Flux's CRDs: the GitRepository's URL and branch, the
// Kustomization's path kept inside the repository as Flux keeps it, a
// HelmRelease's chart and values files; refused where there is no branch
// to propose to, no Git, or a cross-namespace source Flux would refuse.
func TestLocate(t *testing.T) {
	bin, err := testenv.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join(bin, "flux-crds")}})
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kustomizev1.AddToScheme, sourcev1.AddToScheme, helmv2.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	minute := metav1.Duration{Duration: time.Minute}
	repo := func(ns, name string, ref *sourcev1.GitRepositoryRef) *sourcev1.GitRepository {
		return &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: sourcev1.GitRepositorySpec{URL: "https://git.example.com/acme/" + name + ".git", Interval: minute, Reference: ref}}
	}
	ks := func(name, path, refNS, refName string) *kustomizev1.Kustomization {
		return &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name},
			Spec: kustomizev1.KustomizationSpec{Interval: minute, Path: path, Prune: true,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Namespace: refNS, Name: refName}}}
	}
	hr := func(name, sourceKind string) *helmv2.HelmRelease {
		return &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name},
			Spec: helmv2.HelmReleaseSpec{Interval: minute, TargetNamespace: "shop", Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "./charts/db", ValuesFiles: []string{"./envs/prod/values.yaml", "charts/db/values.yaml"},
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: sourceKind, Name: "fleet"},
			}}}}
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shared"}},
		repo("apps", "fleet", &sourcev1.GitRepositoryRef{Branch: "prod"}),
		repo("shared", "common", nil),
		repo("apps", "tagged", &sourcev1.GitRepositoryRef{Tag: "v1.0.0"}),
		ks("shop", "./clusters/../clusters/prod/shop", "", "fleet"),
		ks("outside", "../../etc", "", "fleet"),
		ks("cross", "./", "shared", "common"),
		ks("tag", "./", "", "tagged"),
		hr("db", sourcev1.GitRepositoryKind),
		hr("packaged", sourcev1.HelmRepositoryKind),
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	src := func(kind, name string) v1alpha1.Source {
		return v1alpha1.Source{Kind: kind, Namespace: "apps", Name: name}
	}

	for name, want := range map[string]Where{
		"shop":    {Repository: "https://git.example.com/acme/fleet.git", Branch: "prod", Dir: "clusters/prod/shop"},
		"outside": {Repository: "https://git.example.com/acme/fleet.git", Branch: "prod", Dir: "etc"},
		"cross":   {Repository: "https://git.example.com/acme/common.git", Branch: "master"},
	} {
		got, err := Locate(ctx, c, src(kustomizev1.KustomizationKind, name), false)
		if err != nil || got.Repository != want.Repository || got.Branch != want.Branch || got.Dir != want.Dir || got.Chart != "" {
			t.Errorf("Kustomization %s: %+v, %v; want %+v", name, got, err, want)
		}
	}
	if _, err := Locate(ctx, c, src(kustomizev1.KustomizationKind, "cross"), true); err == nil || !strings.Contains(err.Error(), "flux.noCrossNamespaceRefs") {
		t.Errorf("a cross-namespace source under --no-cross-namespace-refs: %v, want refused", err)
	}
	if _, err := Locate(ctx, c, src(kustomizev1.KustomizationKind, "tag"), false); !errors.Is(err, ErrNoBranch) {
		t.Errorf("a GitRepository at a tag: %v, want ErrNoBranch", err)
	}

	got, err := Locate(ctx, c, src(helmv2.HelmReleaseKind, "db"), false)
	if err != nil || got.Branch != "prod" || got.Chart != "charts/db" || strings.Join(got.ValuesFiles, ",") != "envs/prod/values.yaml,charts/db/values.yaml" ||
		got.Release != (types.NamespacedName{Namespace: "shop", Name: "shop-db"}) {
		t.Errorf("HelmRelease db: %+v, %v; want the chart and values files in fleet@prod, released as shop/shop-db", got, err)
	}
	if _, err := Locate(ctx, c, src(helmv2.HelmReleaseKind, "packaged"), false); err == nil || !strings.Contains(err.Error(), "not from a GitRepository") {
		t.Errorf("a chart from a Helm repository: %v, want refused", err)
	}
	if _, err := Locate(ctx, c, v1alpha1.Source{Kind: "Application", Namespace: "argocd", Name: "shop"}, false); err == nil {
		t.Error("an Argo CD Application: no error")
	}
}

// An Argo CD targetRevision follows a branch, the default one for HEAD;
// a commit or a tag follows none.
func TestArgoBranch(t *testing.T) {
	for rev, want := range map[string]string{"": DefaultBranch, "HEAD": DefaultBranch, "main": "main", "refs/heads/prod": "prod", "release/1.x": "release/1.x"} {
		if got, err := argoBranch(rev); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", rev, got, err, want)
		}
	}
	for _, rev := range []string{"0123456789abcdef0123456789abcdef01234567", "refs/tags/v1"} {
		if _, err := argoBranch(rev); !errors.Is(err, ErrNoBranch) {
			t.Errorf("%q: %v, want ErrNoBranch", rev, err)
		}
	}
}
