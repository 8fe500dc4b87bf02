package install

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// kubeVersion is the Kubernetes the manifests are rendered for and validated
// against: the test control plane's.
const kubeVersion = "1.37.2"

// tool returns the path of a tool `make testenv` links into bin/testenv, and
// fails the test naming the target when it is missing.
func tool(t *testing.T, name string) string {
	t.Helper()
	dir, err := testenv.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing in %s: run `make testenv` (or `make tools`)", name, dir)
	}
	return p
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// run runs a command and returns its stdout; a failure reports stderr.
func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := runErr(name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runErr(name string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), errors.New(filepath.Base(name) + " " + strings.Join(args, " ") + ": " + err.Error() + "\n" + stdout.String() + stderr.String())
	}
	return stdout.Bytes(), nil
}

// objects splits a YAML stream into objects.
func objects(t *testing.T, manifests []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			return objs
		} else if err != nil {
			t.Fatalf("decoding manifests: %v", err)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// validate runs kubeconform strictly on manifests against the Kubernetes
// OpenAPI schemas of bin/testenv and claimwarden's CRD from this checkout;
// a kind without a schema fails too.
func validate(t *testing.T, manifests []byte) error {
	t.Helper()
	crdSchemas := t.TempDir()
	run(t, tool(t, "release"), "schemas", "-crd", filepath.Join(repoRoot(t), "config/crd/bases/claimwarden.dev_volumeclaimrollouts.yaml"), "-out", crdSchemas)
	f := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(f, manifests, 0o644); err != nil {
		t.Fatal(err)
	}
	const layout = "/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"
	_, err := runErr(tool(t, "kubeconform"), "-strict", "-summary", "-kubernetes-version", kubeVersion,
		"-schema-location", tool(t, "kube-schemas")+layout, "-schema-location", crdSchemas+layout, f)
	return err
}

func toYAML(t *testing.T, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
