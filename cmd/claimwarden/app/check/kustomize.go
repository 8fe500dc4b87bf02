package check

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/kustomize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// buildKustomization builds the kustomization in dir for -k. It must be
// the Flux integration's build (integrations/flux.Build), so that -k sees
// what Flux applies; until that is wired here, it calls the same library
// (fluxcd/pkg/kustomize) with Flux's safe defaults: no remote bases, no
// files outside dir.
var buildKustomization = func(_ context.Context, dir string) ([]*unstructured.Unstructured, error) {
	rm, err := kustomize.SecureBuild(dir, dir, false)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	out := make([]*unstructured.Unstructured, 0, rm.Size())
	for _, r := range rm.Resources() {
		// Through JSON, so that numbers are int64 as in any unstructured object.
		js, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %s: %w", dir, r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("kustomize build %s: %s: %w", dir, r.CurId(), err)
		}
		out = append(out, u)
	}
	return out, nil
}
