package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// configDir is the repository's config/ seen from this package's directory
// (go test runs a package's tests in its own directory).
var configDir = filepath.Join("..", "..", "config")

// installRBAC creates what a cluster gets from the deploy manifests before the
// controller runs: the controller's namespace (config/manager/namespace.yaml)
// and every resource config/rbac/kustomization.yaml lists, unmodified. The
// kustomization's list is followed rather than a glob, so a manifest left out
// of it (and so never deployed) is left out here too.
func installRBAC(ctx context.Context, c client.Client) error {
	objs, err := decodeFile(filepath.Join(configDir, "manager", "namespace.yaml"))
	if err != nil {
		return err
	}
	rbacDir := filepath.Join(configDir, "rbac")
	data, err := os.ReadFile(filepath.Join(rbacDir, "kustomization.yaml"))
	if err != nil {
		return err
	}
	var kustomization struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &kustomization); err != nil {
		return fmt.Errorf("config/rbac/kustomization.yaml: %w", err)
	}
	if len(kustomization.Resources) == 0 {
		return errors.New("config/rbac/kustomization.yaml lists no resources")
	}
	for _, name := range kustomization.Resources {
		more, err := decodeFile(filepath.Join(rbacDir, name))
		if err != nil {
			return err
		}
		objs = append(objs, more...)
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

// decodeFile returns every object of a (possibly multi-document) YAML file.
func decodeFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(obj.Object) == 0 {
			continue // an empty document (a stray "---")
		}
		if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s: a document without apiVersion and kind", path)
		}
		out = append(out, obj)
	}
}
