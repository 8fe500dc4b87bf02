package gitedit

import (
	"path"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const baseStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
  volumeClaimTemplates:
    - metadata: {name: logs}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 1Gi}}
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 10Gi}}
`

// overlayFiles is a repository with base/ and overlays/prod/, the overlay
// holding files besides its kustomization.
func overlayFiles(kustomization string, files map[string]string) map[string]string {
	all := map[string]string{
		"base/kustomization.yaml":          "resources: [statefulset.yaml]\n",
		"base/statefulset.yaml":            baseStatefulSet,
		"overlays/prod/kustomization.yaml": kustomization,
	}
	for name, content := range files {
		all["overlays/prod/"+name] = content
	}
	return all
}

// build renders the overlay as kustomize does and returns the sizes of
// the StatefulSet's templates, by name.
func build(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	for name, content := range files {
		if err := fs.WriteFile("/repo/"+name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, "/repo/overlays/prod")
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	rn, err := yaml.Parse(string(out))
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]string{}
	list, _ := rn.Pipe(yaml.Lookup("spec", "volumeClaimTemplates"))
	for _, el := range list.Content() {
		sizes[valueOf(valueOf(el, "metadata"), "name").Value] = valueOf(valueOf(valueOf(valueOf(el, "spec"), "resources"), "requests"), "storage").Value
	}
	return sizes
}

// Whichever way the overlay sets the size, the edit changes the one line
// that does, and kustomize then builds the new size, the other template's
// untouched.
func TestSetOverlaySizeEditsThePatchThatSetsIt(t *testing.T) {
	dataPatch := "- op: replace\n  path: /spec/volumeClaimTemplates/1/spec/resources/requests/storage\n  value: 10Gi # prod\n"
	for _, tc := range []struct {
		name          string
		kustomization string
		files         map[string]string
		edited        string // the file whose one line changes
		line          string // that line after the edit
	}{
		{"JSON 6902 inline", `resources: [../../base]
patches:
  - target: {kind: StatefulSet, name: web}
    patch: |-
      - op: replace
        path: /spec/volumeClaimTemplates/1/spec/resources/requests/storage
        value: 10Gi # prod
`, nil, "overlays/prod/kustomization.yaml", "        value: 20Gi # prod"},
		{"JSON 6902 file", "resources: [../../base]\npatches:\n  - path: data-size.yaml\n    target:\n      kind: StatefulSet\n      name: web\n",
			map[string]string{"data-size.yaml": dataPatch}, "overlays/prod/data-size.yaml", "  value: 20Gi # prod"},
		{"patchesJson6902, JSON", "resources: [../../base]\npatchesJson6902:\n- target: {group: apps, version: v1, kind: StatefulSet, name: web}\n  path: size.json\n",
			map[string]string{"size.json": `[{"op": "replace", "path": "/spec/volumeClaimTemplates/1/spec/resources/requests/storage", "value": "10Gi"}]` + "\n"},
			"overlays/prod/size.json", `[{"op": "replace", "path": "/spec/volumeClaimTemplates/1/spec/resources/requests/storage", "value": "20Gi"}]`},
		{"strategic merge inline", "resources: [../../base]\npatches:\n  - patch: |\n" + indent(baseStatefulSet, "      "), nil,
			"overlays/prod/kustomization.yaml", "              resources: {requests: {storage: 20Gi}}"},
		{"strategic merge file", "resources: [../../base]\npatches:\n  - path: templates.yaml\n",
			map[string]string{"templates.yaml": strings.Replace(baseStatefulSet, "storage: 10Gi}}", "storage: 10Gi}} # prod size", 1)},
			"overlays/prod/templates.yaml", "        resources: {requests: {storage: 20Gi}} # prod size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := overlayFiles(tc.kustomization, tc.files)
			if got := build(t, files)["data"]; got != "10Gi" {
				t.Fatalf("the premise: the overlay builds data at %s, want 10Gi", got)
			}
			edits := setOverlay(t, files, 1)
			if len(edits) != 1 || edits[0].Path != tc.edited {
				t.Fatalf("edits %v, want one of %s", paths(edits), tc.edited)
			}
			removed, added := lineDiff(files[tc.edited], string(edits[0].Content))
			if len(removed) != 1 || len(added) != 1 || added[0] != tc.line {
				t.Errorf("removed %q, added %q; want the one line %q", removed, added, tc.line)
			}
			files[tc.edited] = string(edits[0].Content)
			if got := build(t, files); got["data"] != "20Gi" || got["logs"] != "1Gi" {
				t.Errorf("after the edit kustomize builds %v, want data 20Gi and logs 1Gi", got)
			}
			if again := setOverlay(t, files, 1); len(again) != 0 {
				t.Errorf("set again to the same size: edits %v, want none", paths(again))
			}
		})
	}
}

// Where the size comes from the base, a JSON 6902 patch is added to the
// overlay: kustomize builds the new size, and every line of the
// kustomization is still there, in order.
func TestSetOverlaySizeAddsAPatchWhenTheBaseSetsIt(t *testing.T) {
	for _, kustomization := range []string{
		"# prod\nresources: [../../base]\n",
		"resources: [../../base]\npatches:\n  # replicas for prod\n  - target: {kind: StatefulSet, name: web}\n    patch: |-\n      - op: add\n        path: /spec/replicas\n        value: 3\nnamePrefix: prod-\n",
	} {
		files := overlayFiles(kustomization, nil)
		edits := setOverlay(t, files, 1)
		if len(edits) != 1 || edits[0].Path != "overlays/prod/kustomization.yaml" {
			t.Fatalf("edits %v, want the kustomization", paths(edits))
		}
		after := string(edits[0].Content)
		if !keepsLines(kustomization, after) {
			t.Errorf("lines lost or reordered:\n%s\nbecame\n%s", kustomization, after)
		}
		files["overlays/prod/kustomization.yaml"] = after
		if got := build(t, files); got["data"] != "20Gi" || got["logs"] != "1Gi" {
			t.Errorf("kustomize builds %v from\n%s\nwant data 20Gi and logs 1Gi", got, after)
		}
	}
}

// A manifest among the kustomization's own resources that sets the size is
// edited in place (its one line), not overridden by a new patch; a base it
// names is not.
func TestSetOverlaySizeEditsTheResourceThatSetsIt(t *testing.T) {
	kustomization := "resources:\n- ../../base/service.yaml\n- statefulset.yaml\n- https://example.com/remote.yaml\n"
	files := overlayFiles(kustomization, map[string]string{"statefulset.yaml": baseStatefulSet})
	files["base/service.yaml"] = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"
	delete(files, "base/kustomization.yaml")
	edits := setOverlay(t, files, 1)
	if len(edits) != 1 || edits[0].Path != "overlays/prod/statefulset.yaml" {
		t.Fatalf("edits %v, want the overlay's statefulset.yaml", paths(edits))
	}
	if removed, added := lineDiff(baseStatefulSet, string(edits[0].Content)); len(removed) != 1 || len(added) != 1 || added[0] != "        resources: {requests: {storage: 20Gi}}" {
		t.Errorf("diff removes %q, adds %q; want the data size line only", removed, added)
	}
	files["overlays/prod/statefulset.yaml"] = string(edits[0].Content)
	delete(files, "overlays/prod/kustomization.yaml")
	files["overlays/prod/kustomization.yaml"] = "resources: [statefulset.yaml]\n"
	if got := build(t, files); got["data"] != "20Gi" || got["logs"] != "1Gi" {
		t.Errorf("kustomize builds %v, want data 20Gi and logs 1Gi", got)
	}
}

func setOverlay(t *testing.T, files map[string]string, index int) []Edit {
	t.Helper()
	o := Overlay{
		Path:          "overlays/prod/kustomization.yaml",
		Kustomization: []byte(files["overlays/prod/kustomization.yaml"]),
		Read: func(p string) ([]byte, error) {
			return []byte(files[path.Clean(p)]), nil
		},
	}
	edits, err := SetOverlaySize(o, Target{Namespace: "shop", StatefulSet: "web", Template: "data"}, index, "20Gi")
	if err != nil {
		t.Fatal(err)
	}
	return edits
}

// keepsLines reports whether every line of a is in b, in order.
func keepsLines(a, b string) bool {
	bl := strings.Split(b, "\n")
	i := 0
	for _, l := range strings.Split(strings.TrimRight(a, "\n"), "\n") {
		for i < len(bl) && bl[i] != l {
			i++
		}
		if i == len(bl) {
			return false
		}
		i++
	}
	return true
}

func paths(edits []Edit) []string {
	var out []string
	for _, e := range edits {
		out = append(out, e.Path)
	}
	return out
}
