package flux

import (
	"bytes"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/konfig"
	kustypes "sigs.k8s.io/kustomize/api/types"
	sigsyaml "sigs.k8s.io/yaml"
)

// templateLabelKeys returns the label keys that kustomization files under
// root may inject into pod and claim templates: commonLabels (kustomize puts
// them in selectors and templates, volumeClaimTemplates included), `labels`
// entries with includeSelectors, includeTemplates or fields reaching a
// template, and LabelTransformer configurations listed under transformers.
// Flux adds none of its own there: commonMetadata and its ownership labels
// go on objects' top-level metadata only.
//
// Every kustomization file under root is read, whether the build used it or
// not: including too much only keeps claimwarden from copying a label, while
// missing one would copy build-injected labels onto PVCs. Files that do not
// parse are skipped for the same reason: the build already parsed those it
// used. A file past the limits fails the build: it could not be read safely.
func templateLabelKeys(root string, l Limits) ([]string, error) {
	names := konfig.RecognizedKustomizationFileNames()
	keys := map[string]struct{}{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.Contains(names, d.Name()) {
			return nil
		}
		// Each file within the limits on its own: they are read one at a
		// time, and a repository may hold thousands.
		data, err := readBounded(root, p, newBudget(l))
		if err != nil {
			return err
		}
		var k kustypes.Kustomization
		if sigsyaml.Unmarshal(data, &k) != nil {
			return nil
		}
		//lint:ignore SA1019 deprecated, but kustomize still applies it, to templates too
		for key := range k.CommonLabels {
			keys[key] = struct{}{}
		}
		for _, l := range k.Labels {
			if reachesTemplates(l) {
				for key := range l.Pairs {
					keys[key] = struct{}{}
				}
			}
		}
		for _, t := range k.Transformers {
			for _, key := range labelTransformerKeys(root, filepath.Dir(p), t, l) {
				keys[key] = struct{}{}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(keys)), nil
}

func reachesTemplates(l kustypes.Label) bool {
	if l.IncludeSelectors || l.IncludeTemplates {
		return true
	}
	for _, f := range l.FieldSpecs {
		if strings.Contains(strings.ToLower(f.Path), "template") {
			return true
		}
	}
	return false
}

// labelTransformerKeys reads a transformers entry, inline YAML or a file
// under root, and returns the label keys of the LabelTransformers in it.
// Anything else (directories, remote or unreadable entries) yields none.
func labelTransformerKeys(root, dir, entry string, l Limits) []string {
	data := []byte(entry)
	if !strings.Contains(entry, "\n") {
		p := filepath.Join(dir, entry)
		if rel, err := filepath.Rel(root, p); err != nil || !filepath.IsLocal(rel) {
			return nil
		}
		var err error
		if data, err = readBounded(root, p, newBudget(l)); err != nil {
			return nil // the build read it too, within its limits, or failed
		}
	}
	var keys []string
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var t struct {
			Kind   string            `json:"kind"`
			Labels map[string]string `json:"labels"`
		}
		if dec.Decode(&t) != nil {
			return keys
		}
		if t.Kind == "LabelTransformer" {
			keys = slices.AppendSeq(keys, maps.Keys(t.Labels))
		}
	}
}
