package e2e

import (
	"context"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// configDir is the repository's config/ seen from this package's directory
// (go test runs a package's tests in its own directory).
var configDir = filepath.Join("..", "..", "config")

// allComponents are the optional features' RBAC components the e2e tests
// use: they run the Flux (Kustomization and HelmRelease) and Argo CD
// integrations and post commit statuses. autoresize is installed too, so
// that the component builds beside the others and its Role exists.
var allComponents = []string{"convergence", "flux", "flux-substitute-configmaps", "helm", "helm-cli", "argocd", "gitstatus", "autoresize", "policy-reports"}

// installRBAC creates what a cluster gets from the deploy manifests before the
// controller runs: the controller's namespace (config/manager/namespace.yaml)
// and config/rbac with the named components, built by kustomize exactly as
// `kubectl apply -k` with those components listed would build them.
func installRBAC(ctx context.Context, c client.Client, components ...string) error {
	objs, err := buildRBAC(components...)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

// buildRBAC runs kustomize on a kustomization that lists the namespace,
// config/rbac and the components, as config/default does. kustomize refuses
// absolute resource paths, so config/ is copied into an in-memory file
// system and built from a directory beside it.
func buildRBAC(components ...string) ([]*unstructured.Unstructured, error) {
	fs := filesys.MakeFsInMemory()
	err := filepath.WalkDir(configDir, func(path string, d iofs.DirEntry, err error) error {
		// The chart's links into config/ (config/helm/*/files) would copy
		// those files twice; only regular files are kustomize's.
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(configDir, path)
		if err != nil {
			return err
		}
		return fs.WriteFile(filepath.Join("/config", rel), data)
	})
	if err != nil {
		return nil, err
	}
	k := kustypes.Kustomization{
		TypeMeta:  kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
		Resources: []string{"../config/manager/namespace.yaml", "../config/rbac"},
	}
	for _, name := range components {
		k.Components = append(k.Components, "../config/components/"+name)
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return nil, err
	}
	if err := fs.WriteFile("/build/kustomization.yaml", data); err != nil {
		return nil, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = kustypes.LoadRestrictionsNone // the files live beside /build
	res, err := krusty.MakeKustomizer(opts).Run(fs, "/build")
	if err != nil {
		return nil, fmt.Errorf("kustomize config/rbac with components %s: %w", strings.Join(components, ", "), err)
	}
	var out []*unstructured.Unstructured
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, err
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}
