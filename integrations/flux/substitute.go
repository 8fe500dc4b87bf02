package flux

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/kustomize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/resource"
)

// resolveVariables returns the postBuild variables of ks as kustomize-
// controller computes them for every resource: the data of the
// substituteFrom ConfigMaps and Secrets in order (a missing optional one
// skipped), overridden by spec.postBuild.substitute. It is nil without
// postBuild. Resolving once per build, rather than per resource as
// SubstituteVariables does, spares the API server and gives Builder's cache
// key.
func resolveVariables(ctx context.Context, ks *kustomizev1.Kustomization, reader client.Reader) (map[string]string, error) {
	if ks == nil || ks.Spec.PostBuild == nil {
		return nil, nil
	}
	vars := map[string]string{}
	if len(ks.Spec.PostBuild.SubstituteFrom) > 0 {
		if reader == nil {
			return nil, fmt.Errorf("%s: spec.postBuild.substituteFrom: no Kubernetes reader to resolve it with", subject(ks))
		}
		u, err := toUnstructured(ks)
		if err != nil {
			return nil, err
		}
		from, err := kustomize.LoadVariables(ctx, readerClient{reader: reader}, u)
		if err != nil {
			return nil, fmt.Errorf("%s: spec.postBuild.substituteFrom: %w", subject(ks), err)
		}
		vars = from
	}
	for k, v := range ks.Spec.PostBuild.Substitute {
		vars[k] = strings.ReplaceAll(v, "\n", "") // as LoadVariables does
	}
	return vars, nil
}

// substituter returns kustomize-controller's post-build substitution for
// one resource, with variables already resolved: dry-run mode makes
// SubstituteVariables take them from the inline substitute map only.
func substituter(ks *kustomizev1.Kustomization, vars map[string]string, strict bool) func(context.Context, *resource.Resource) error {
	inline := make(map[string]any, len(vars))
	for k, v := range vars {
		inline[k] = v
	}
	carrier := unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"postBuild": map[string]any{"substitute": inline}},
	}}
	opts := []kustomize.SubstituteOption{
		kustomize.SubstituteWithDryRun(true),
		kustomize.SubstituteWithStrict(strict),
		kustomize.SubstituteWithAlways(ks.GetSubstituteStrategy() == kustomizev1.SubstituteStrategyAlways),
	}
	return func(ctx context.Context, res *resource.Resource) error {
		_, err := kustomize.SubstituteVariables(ctx, nil, carrier, res, opts...)
		return err
	}
}

// varsHash identifies a set of resolved variables without keeping their
// values (Secret data among them) in memory longer than the build.
func varsHash(vars map[string]string) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	write := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	if vars == nil {
		write("no postBuild")
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		write(k)
		write(vars[k])
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// readerClient lets a client.Reader stand where fluxcd/pkg/kustomize's
// LoadVariables asks for a client.Client: it only reads. The embedded nil
// Client would panic on a write, which LoadVariables never makes.
type readerClient struct {
	client.Client
	reader client.Reader
}

func (c readerClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.reader.Get(ctx, key, obj, opts...)
}

func (c readerClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.reader.List(ctx, list, opts...)
}

func toUnstructured(ks *kustomizev1.Kustomization) (unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ks)
	if err != nil {
		return unstructured.Unstructured{}, fmt.Errorf("%s: %w", subject(ks), err)
	}
	return unstructured.Unstructured{Object: m}, nil
}

// subject names the Kustomization in errors.
func subject(ks *kustomizev1.Kustomization) string {
	return "Kustomization " + ks.Namespace + "/" + ks.Name
}
