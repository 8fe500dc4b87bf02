package check

import (
	"context"

	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/integrations/manifests"
)

// buildKustomization builds dir as the Flux integration does (and so as
// kustomize-controller does), for -k: a directory without a
// kustomization.yaml is built as Flux builds plain manifests. It returns
// the objects and the label keys the build may inject into templates,
// which claims never get.
func buildKustomization(ctx context.Context, dir string) ([]manifests.Object, []string, error) {
	res, err := flux.Build(ctx, dir, flux.BuildOptions{})
	if err != nil {
		return nil, nil, err
	}
	return manifests.FromUnstructured(res.Objects, "kustomize build "+dir), res.TemplateLabelKeys, nil
}
