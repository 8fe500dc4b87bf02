package flux

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTemplateLabelKeys(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "root")
	// Outside the root: never read.
	writeFiles(t, tmp, map[string]string{"outside.yaml": "kind: LabelTransformer\nlabels: {outside: x}\n"})
	writeFiles(t, root, map[string]string{
		"app/kustomization.yaml": `
commonLabels: {common: x}
labels:
  - pairs: {selectors: x}
    includeSelectors: true
  - pairs: {templates: x}
    includeTemplates: true
  - pairs: {claims: x}
    fields:
      - path: spec/volumeClaimTemplates[]/metadata/labels
        kind: StatefulSet
  - pairs: {top-level-only: x}
transformers:
  - labels.yaml
  - ../../outside.yaml
  - |-
    apiVersion: builtin
    kind: LabelTransformer
    metadata: {name: inline}
    labels: {inline: x}
    fieldSpecs: [{path: spec/template/metadata/labels, create: true}]
`,
		"app/labels.yaml": `
apiVersion: builtin
kind: AnnotationsTransformer
metadata: {name: notes}
annotations: {not-a-label: x}
---
apiVersion: builtin
kind: LabelTransformer
metadata: {name: from-file}
labels: {from-file: x}
fieldSpecs: [{path: metadata/labels, create: true}]
`,
		"component/Kustomization":  "kind: Component\ncommonLabels: {component: x}\n",
		"broken/kustomization.yml": "commonLabels: [not, a, map\n",
		".git/kustomization.yaml":  "commonLabels: {in-git-dir: x}\n",
	})
	got, err := templateLabelKeys(root, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claims", "common", "component", "from-file", "inline", "selectors", "templates"}
	if !slices.Equal(got, want) {
		t.Errorf("templateLabelKeys = %v, want %v", got, want)
	}
}
