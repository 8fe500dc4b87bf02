package flux

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// Where a Kustomization reads its StatefulSets from, read from its objects
// on a real API server with Flux's CRDs: the GitRepository's URL and
// branch, the Kustomization's path kept inside the repository as Flux
// keeps it; refused where there is no branch to propose to, or a
// cross-namespace source Flux would refuse.
func TestLocate(t *testing.T) {
	bin, err := testenv.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join(bin, "flux-crds")}})
	c := testenv.Client(t, env.Config, kustomizev1.AddToScheme, sourcev1.AddToScheme)
	ctx := context.Background()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shared"}},
		gitRepository("apps", "fleet", &sourcev1.GitRepositoryRef{Branch: "prod"}),
		gitRepository("shared", "common", nil),
		gitRepository("apps", "tagged", &sourcev1.GitRepositoryRef{Tag: "v1.0.0"}),
		locatedKustomization("shop", "./clusters/../clusters/prod/shop", "", "fleet"),
		locatedKustomization("outside", "../../etc", "", "fleet"),
		locatedKustomization("cross", "./", "shared", "common"),
		locatedKustomization("tag", "./", "", "tagged"),
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	k := &Kustomizations{Reader: c}
	locate := func(k *Kustomizations, name string) (source.Where, error) {
		ks := &kustomizev1.Kustomization{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: name}, ks); err != nil {
			t.Fatal(err)
		}
		return k.Locate(ctx, ks, nil)
	}

	for name, want := range map[string]source.Where{
		"shop":    {Repository: "https://git.example.com/acme/fleet.git", Branch: "prod", Dir: "clusters/prod/shop"},
		"outside": {Repository: "https://git.example.com/acme/fleet.git", Branch: "prod", Dir: "etc"},
		"cross":   {Repository: "https://git.example.com/acme/common.git", Branch: "master"},
	} {
		got, err := locate(k, name)
		if err != nil || got.Repository != want.Repository || got.Branch != want.Branch || got.Dir != want.Dir || got.Chart != "" {
			t.Errorf("Kustomization %s: %+v, %v; want %+v", name, got, err, want)
		}
	}
	// A Kustomization that is not on the server is located from itself.
	if got, err := k.Locate(ctx, locatedKustomization("unsaved", "./apps", "", "fleet"), nil); err != nil || got.Dir != "apps" || got.Branch != "prod" {
		t.Errorf("a Kustomization given: %+v, %v; want it located without a read", got, err)
	}
	if _, err := locate(&Kustomizations{Reader: c, NoCrossNamespaceRefs: true}, "cross"); err == nil || !strings.Contains(err.Error(), "its source is in namespace shared: cross-namespace references are not allowed (flux.noCrossNamespaceRefs)") {
		t.Errorf("a cross-namespace source under --no-cross-namespace-refs: %v, want refused", err)
	}
	if _, err := locate(k, "tag"); !errors.Is(err, source.ErrNoBranch) {
		t.Errorf("a GitRepository at a tag: %v, want ErrNoBranch", err)
	}
}

// gitRepository is the GitRepository ns/name at
// https://git.example.com/acme/<name>.git, following ref.
func gitRepository(ns, name string, ref *sourcev1.GitRepositoryRef) *sourcev1.GitRepository {
	return &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: sourcev1.GitRepositorySpec{URL: "https://git.example.com/acme/" + name + ".git", Interval: metav1.Duration{Duration: time.Minute}, Reference: ref}}
}

// locatedKustomization is the Kustomization apps/name building path of the
// GitRepository refNS/refName.
func locatedKustomization(name, path, refNS, refName string) *kustomizev1.Kustomization {
	return &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Minute}, Path: path, Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Namespace: refNS, Name: refName}}}
}
