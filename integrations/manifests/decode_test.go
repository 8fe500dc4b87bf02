package manifests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// where renders objects as "kind/name@line" for compact comparisons.
func where(objs []Object) string {
	var parts []string
	for _, o := range objs {
		parts = append(parts, fmt.Sprintf("%s/%s@%s", o.GetKind(), o.GetName(), o.Location))
	}
	return strings.Join(parts, " ")
}

func TestDecodeYAML(t *testing.T) {
	in := `# leading comment
---
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
---
# only a comment
---
apiVersion: v1
kind: List
items:
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata: {name: fast}
  allowVolumeExpansion: yes
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: c
...
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 3
`
	objs, err := Decode(strings.NewReader(in), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := "Namespace/shop@a.yaml:3 StorageClass/fast@a.yaml:14 ConfigMap/c@a.yaml:18 StatefulSet/web@a.yaml:24"
	if got := where(objs); got != want {
		t.Errorf("objects = %s\nwant      %s", got, want)
	}
	// Values are read as kubectl reads them: "yes" is true, 3 an int64.
	if v, _, _ := unstructured.NestedBool(objs[1].Object, "allowVolumeExpansion"); !v {
		t.Errorf("allowVolumeExpansion: yes = %v, want true", objs[1].Object["allowVolumeExpansion"])
	}
	if v, ok, _ := unstructured.NestedInt64(objs[3].Object, "spec", "replicas"); !ok || v != 3 {
		t.Errorf("replicas = %#v, want int64 3", objs[3].Object["spec"])
	}
	if loc := objs[3].locate("spec", "replicas"); loc.Line != 29 {
		t.Errorf("spec.replicas located at %s, want a.yaml:29", loc)
	}
	// Items of a List know their own fields' lines.
	if loc := objs[2].locate("metadata", "name"); loc.Line != 21 {
		t.Errorf("the ConfigMap's metadata.name located at %s, want a.yaml:21", loc)
	}
}

func TestDecodeJSON(t *testing.T) {
	in := "\n{\n\t\"apiVersion\": \"apps/v1\",\n\t\"kind\": \"StatefulSet\",\n\t\"metadata\": {\"name\": \"a\"},\n\t\"spec\": {\"replicas\": 2}\n}\n{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"b\"}}\n"
	objs, err := Decode(strings.NewReader(in), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := where(objs), "StatefulSet/a@a.json:2 Namespace/b@a.json:8"; got != want {
		t.Errorf("objects = %s, want %s", got, want)
	}
	if loc := objs[0].locate("spec", "replicas"); loc.Line != 6 {
		t.Errorf("spec.replicas located at %s, want a.json:6", loc)
	}
	if v, ok, _ := unstructured.NestedInt64(objs[0].Object, "spec", "replicas"); !ok || v != 2 {
		t.Errorf("replicas = %#v, want int64 2", objs[0].Object["spec"])
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"bad indentation", "a: 1\n---\nb: 2\nc: 3\n  d: 4\n", "x.yaml:5: invalid YAML: mapping values are not allowed in this context"},
		{"tab", "kind: X\n\tname: y\n", "x.yaml:2: invalid YAML: found a tab character that violates indentation"},
		// The YAML parser numbers the lines of its own errors from 0.
		{"parser error", "kind: X\nspec:\n  a: 1\n b: 2\n", "x.yaml:4: invalid YAML: did not find expected key"},
		{"unclosed flow", "kind: X\nitems: [\n  a\n  b: c\n", "x.yaml:4: invalid YAML: did not find expected ',' or ']'"},
		// Both YAML readers would keep the last value silently; the API
		// server refuses a repeated field, and so does check.
		{"duplicate key", "kind: X\nspec:\n  storage: 10Gi\n  storage: 20Gi\n", `x.yaml:4: invalid YAML: key "storage" already set in map`},
		{"later document", "kind: X\n---\n# c\nkind: Y\nspec:\n  a: 1\n b: 2\n", "x.yaml:7: invalid YAML: did not find expected key"},
		{"separator with content", "kind: X\n--- {kind: Y}\n", `x.yaml:2: content after the document separator "--- {kind: Y}": start the document on the next line`},
		{"list document", "- a\n- b\n", "x.yaml:1: the document is a list, not a Kubernetes object"},
		{"scalar document", "kind: X\n---\nhello\n", "x.yaml:3: the document is a single value, not a Kubernetes object"},
		{"bad JSON", "{\"kind\": \"X\",\n \"a\": }\n", "x.yaml:2: invalid JSON: invalid character '}' looking for beginning of value"},
		{"JSON list", "[{\"kind\": \"X\"}]", "x.yaml:1: the document is a list, not a Kubernetes object"},
		{"List item", "kind: List\nitems:\n- 1\n", "x.yaml:3: items[0] of the List is not an object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := Decode(strings.NewReader(c.in), "x.yaml")
			if err == nil || err.Error() != c.want {
				t.Errorf("Decode = %s, %v\nwant error %s", where(objs), err, c.want)
			}
		})
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	obj := func(kind, name string) string {
		return "apiVersion: v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n"
	}
	write("b.yaml", obj("ConfigMap", "b"))
	write("a.yml", obj("ConfigMap", "a"))
	write("sub/c.json", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`)
	write("sub/README.md", "not a manifest")
	write(".github/workflows/ci.yaml", "on: push\n")
	write(".hidden.yaml", obj("ConfigMap", "hidden"))
	single := write("single/one.txt", obj("Secret", "s"))

	stdin := strings.NewReader(obj("ConfigMap", "in"))
	objs, err := Read([]string{dir, "-", single}, stdin)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("ConfigMap/a@%[1]s/a.yml:1 ConfigMap/b@%[1]s/b.yaml:1 ConfigMap/c@%[1]s/sub/c.json:1 ConfigMap/in@stdin:1 Secret/s@%[1]s/single/one.txt:1", dir)
	if got := where(objs); got != want {
		t.Errorf("Read = %s\nwant   %s", got, want)
	}

	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{[]string{filepath.Join(dir, "missing.yaml")}, "no such file or directory"},
		{[]string{empty}, empty + ": no *.yaml, *.yml or *.json files in the directory"},
		{[]string{"-", "-"}, `"-" (stdin) is given twice`},
	} {
		if _, err := Read(c.paths, strings.NewReader("")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Read(%v) = %v, want an error containing %q", c.paths, err, c.want)
		}
	}
}

func TestFromUnstructured(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "web"}}}
	objs := FromUnstructured([]*unstructured.Unstructured{u}, "kustomize build overlays/prod")
	if got, want := where(objs), "StatefulSet/web@kustomize build overlays/prod"; got != want {
		t.Errorf("FromUnstructured = %s, want %s", got, want)
	}
	if loc := objs[0].locate("spec", "replicas"); loc != objs[0].Location {
		t.Errorf("a built object locates its fields at %s, want the build itself", loc)
	}
}

func TestDecodeFlattensNestedLists(t *testing.T) {
	in := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: List
  items:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c}
`
	objs, err := Decode(strings.NewReader(in), "nested.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := where(objs), "StatefulSet/web@nested.yaml:7 ConfigMap/c@nested.yaml:10"; got != want {
		t.Errorf("objects = %s\nwant      %s", got, want)
	}
	sts, _, err := StatefulSets(objs)
	if err != nil || len(sts) != 1 || sts[0].Name != "web" {
		t.Errorf("StatefulSets = %v, %v; want web, found inside the inner List", sts, err)
	}

	deep := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`
	for range maxListDepth + 1 {
		deep = `{"apiVersion": "v1", "kind": "List", "items": [` + deep + `]}`
	}
	_, err = Decode(strings.NewReader(deep), "deep.json")
	if err == nil || !strings.Contains(err.Error(), "deep.json:1") || !strings.Contains(err.Error(), "Lists nested deeper than") {
		t.Errorf("Decode of Lists nested %d deep: %v, want an error naming the file and the depth", maxListDepth+1, err)
	}
}
