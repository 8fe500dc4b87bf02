package helm

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// Where a HelmRelease reads its StatefulSets from, read from its objects
// on a real API server with Flux's CRDs: its chart and values files in a
// GitRepository, with Flux's reconcileStrategy; refused for a chart from a
// Helm repository source-controller has not packaged yet. Values the
// HelmRelease sets itself are located by the registry's parents (a Flux
// Kustomization, the flux package's tool).
func TestLocate(t *testing.T) {
	c := kube(t)
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
	revised := hr("revised", sourcev1.GitRepositoryKind)
	revised.Spec.Chart.Spec.ReconcileStrategy = sourcev1.ReconcileStrategyRevision
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shared"}},
		repo("apps", "fleet", &sourcev1.GitRepositoryRef{Branch: "prod"}),
		repo("shared", "common", nil),
		ks("shop", "./clusters/../clusters/prod/shop", "", "fleet"),
		ks("cross", "./", "shared", "common"),
		hr("db", sourcev1.GitRepositoryKind),
		revised,
		hr("packaged", sourcev1.HelmRepositoryKind),
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	var tools source.Registry
	tools.Know(&flux.Kustomizations{Reader: c})
	tools.Know(&HelmReleases{Reader: c})
	locate := func(name string) (source.Where, error) {
		l, ok := tools.Locator(helmv2.HelmReleaseKind)
		if !ok {
			t.Fatal("the registry has no locator of HelmReleases")
		}
		obj := l.NewObject()
		if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: name}, obj); err != nil {
			t.Fatal(err)
		}
		return l.Locate(ctx, obj, tools.Parents(c))
	}

	got, err := locate("db")
	if err != nil || got.Branch != "prod" || got.Chart != "charts/db" || strings.Join(got.ValuesFiles, ",") != "envs/prod/values.yaml,charts/db/values.yaml" ||
		got.Release != (types.NamespacedName{Namespace: "shop", Name: "shop-db"}) {
		t.Errorf("HelmRelease db: %+v, %v; want the chart and values files in fleet@prod, released as shop/shop-db", got, err)
	}
	// Flux's default reconcileStrategy, ChartVersion (the API server sets
	// it), packages the chart anew only for a new version; Revision for
	// every commit.
	if got.ChartByVersion == nil || *got.ChartByVersion != (types.NamespacedName{Namespace: "apps", Name: "db"}) {
		t.Errorf("HelmRelease db: ChartByVersion %v, want apps/db", got.ChartByVersion)
	}
	if got, err := locate("revised"); err != nil || got.ChartByVersion != nil {
		t.Errorf("HelmRelease revised (reconcileStrategy Revision): %+v, %v; want no ChartByVersion", got, err)
	}
	if _, err := locate("packaged"); err == nil || !strings.Contains(err.Error(), "no HelmChart of it yet") {
		t.Errorf("a chart from a Helm repository without its HelmChart: %v, want refused", err)
	}
	testLocateHelmReleaseValues(t, c, locate, hr)
}

// A HelmRelease that sets spec.values is edited in its own manifest when a
// Kustomization applies it: the labels name the Kustomization, its
// inventory confirms it, and the pull request goes to its repository with
// the chart read from the chart's. Labels the inventory does not confirm
// are refused; without labels only the values files are edited.
func testLocateHelmReleaseValues(t *testing.T, c client.Client, locate func(string) (source.Where, error), hr func(name, sourceKind string) *helmv2.HelmRelease) {
	ctx := context.Background()
	valued := func(name, ks string) *helmv2.HelmRelease {
		o := hr(name, sourcev1.GitRepositoryKind)
		o.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"persistence":{"size":"10Gi"}}`)}
		if ks != "" {
			o.Labels = map[string]string{flux.LabelKustomizationName: ks, flux.LabelKustomizationNamespace: "apps"}
		}
		return o
	}
	packaged := func(name, ks string) *helmv2.HelmRelease {
		o := valued(name, ks)
		o.Spec.Chart.Spec.SourceRef.Kind = sourcev1.HelmRepositoryKind
		o.Spec.Chart.Spec.Chart = "db"
		return o
	}
	for _, o := range []*helmv2.HelmRelease{valued("valued", "shop"), valued("elsewhere", "cross"), valued("forged", "shop"), valued("byhand", ""),
		packaged("repo-chart", "shop"), packaged("repo-byhand", "")} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		if o.Spec.Chart.Spec.SourceRef.Kind == sourcev1.HelmRepositoryKind {
			o.Status.HelmChart = "apps/apps-" + o.GetName()
			if err := c.Status().Update(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	applied := func(ks string, releases ...string) {
		k := &kustomizev1.Kustomization{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: ks}, k); err != nil {
			t.Fatal(err)
		}
		k.Status.Inventory = &kustomizev1.ResourceInventory{}
		for _, r := range releases {
			k.Status.Inventory.Entries = append(k.Status.Inventory.Entries, kustomizev1.ResourceRef{ID: "apps_" + r + "_helm.toolkit.fluxcd.io_HelmRelease", Version: "v2"})
		}
		if err := c.Status().Update(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	applied("shop", "valued", "repo-chart")
	applied("cross", "elsewhere")
	inline := source.Inline{Kind: "HelmRelease", Namespace: "apps", Name: "valued", Field: []string{"spec", "values"}}

	got, err := locate("valued")
	if err != nil || got.Inline == nil || !reflect.DeepEqual(*got.Inline, inline) || got.Dir != "clusters/prod/shop" || got.Chart != "charts/db" ||
		got.ChartRepository != "" || len(got.HelmValues) != 1 || string(got.HelmValues[0]) != "persistence:\n  size: 10Gi\n" ||
		got.ChartByVersion == nil || got.ChartByVersion.Name != "valued" {
		t.Errorf("HelmRelease valued: %+v, %v; want its manifest under the Kustomization shop's path, the chart beside it", got, err)
	}
	got, err = locate("elsewhere")
	if err != nil || got.Inline == nil || got.Repository != "https://git.example.com/acme/common.git" || got.Branch != "master" ||
		got.ChartRepository != "https://git.example.com/acme/fleet.git" || got.ChartBranch != "prod" {
		t.Errorf("HelmRelease elsewhere: %+v, %v; want the pull request to common@master, the chart read from fleet@prod", got, err)
	}
	if _, err := locate("forged"); err == nil || !strings.Contains(err.Error(), "HelmRelease apps/forged names Kustomization apps/shop, which does not apply it") {
		t.Errorf("labels naming a Kustomization whose inventory does not hold it: %v, want refused", err)
	}
	got, err = locate("repo-chart")
	if err != nil || got.Inline == nil || got.HelmChart == nil || *got.HelmChart != (types.NamespacedName{Namespace: "apps", Name: "apps-repo-chart"}) ||
		got.Chart != "db" || strings.Join(got.ValuesFiles, ",") != "db/envs/prod/values.yaml,db/charts/db/values.yaml" || got.Repository != "https://git.example.com/acme/fleet.git" ||
		got.ChartByVersion != nil {
		t.Errorf("HelmRelease repo-chart: %+v, %v; want its manifest in fleet, the chart in HelmChart apps/apps-repo-chart", got, err)
	}
	if _, err := locate("repo-byhand"); err == nil || !strings.Contains(err.Error(), "no Flux Kustomization applies it") {
		t.Errorf("a packaged chart's HelmRelease applied by hand: %v, want refused", err)
	}
	got, err = locate("byhand")
	if err != nil || got.Inline != nil || got.Chart != "charts/db" || len(got.HelmValues) == 0 {
		t.Errorf("HelmRelease byhand: %+v, %v; want the values files, rendered under its spec.values", got, err)
	}
}
