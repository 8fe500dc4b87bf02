package gitedit

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Target is the claim template whose size an edit sets.
type Target struct {
	// Namespace is the StatefulSet's; a document that names no namespace
	// matches any (the GitOps tool or kustomize sets it).
	Namespace   string
	StatefulSet string
	Template    string
}

func (t Target) String() string {
	return fmt.Sprintf("volumeClaimTemplate %s of StatefulSet %s/%s", t.Template, t.Namespace, t.StatefulSet)
}

// storagePath is where a claim template sets its size.
var storagePath = []string{"spec", "resources", "requests", "storage"}

// isTarget reports whether doc (a document's root) is the target's
// StatefulSet, or a patch of it: kind StatefulSet, its name, and its
// namespace unless the document names none.
func isTarget(doc *yaml.RNode, t Target) bool {
	if doc.YNode().Kind != yaml.MappingNode || doc.GetKind() != "StatefulSet" || doc.GetName() != t.StatefulSet {
		return false
	}
	ns := doc.GetNamespace()
	return ns == "" || ns == t.Namespace
}

// setting is the scalar that sets a size, and whether it sits in a flow
// collection ({...} or [...]), where a plain scalar ends at , } or ].
type setting struct {
	node *yaml.Node
	flow bool
}

// templateStorage is where doc sets the target template's size; node is
// nil when doc does not set it.
func templateStorage(doc *yaml.RNode, t Target) (setting, error) {
	list, err := doc.Pipe(yaml.Lookup("spec", "volumeClaimTemplates"))
	if err != nil || list == nil || list.YNode().Kind != yaml.SequenceNode {
		return setting{}, err
	}
	for _, el := range list.Content() {
		tmpl := yaml.NewRNode(el)
		name, err := tmpl.Pipe(yaml.Lookup("metadata", "name"))
		if err != nil {
			return setting{}, err
		}
		if name == nil || yaml.GetValue(name) != t.Template {
			continue
		}
		return storageOf(el, t, list.YNode().Style&yaml.FlowStyle != 0)
	}
	return setting{}, nil
}

// storageOf follows storagePath from a template's mapping; flow says
// whether a collection above it is in flow style.
func storageOf(n *yaml.Node, t Target, flow bool) (setting, error) {
	for _, key := range storagePath {
		flow = flow || n.Style&yaml.FlowStyle != 0
		if n = valueOf(n, key); n == nil {
			return setting{}, nil
		}
	}
	if n.Kind != yaml.ScalarNode {
		return setting{}, fmt.Errorf("%s: %s is not a scalar", t, strings.Join(storagePath, "."))
	}
	return setting{node: n, flow: flow}, nil
}

// valueOf is the value of key in mapping m, nil when m is no mapping or
// has no such key.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// aliased reports, for scalar n in the document under root, the anchor
// that makes its value appear elsewhere too: n's own, or that of a
// collection holding it, when an alias (*name, or a merge key <<: *name)
// uses it. Editing n would then change what the alias repeats: another
// template, another StatefulSet, which no policy was asked about.
func aliased(root, n *yaml.Node) (string, bool) {
	used := map[*yaml.Node]bool{}
	var ancestors []*yaml.Node
	var walk func(x *yaml.Node, path []*yaml.Node)
	walk = func(x *yaml.Node, path []*yaml.Node) {
		if x.Kind == yaml.AliasNode {
			used[x.Alias] = true
			return
		}
		path = append(path, x)
		if x == n {
			ancestors = slices.Clone(path)
		}
		for _, c := range x.Content {
			walk(c, path)
		}
	}
	walk(root, nil)
	for _, a := range ancestors {
		if used[a] {
			return a.Anchor, true
		}
	}
	return "", false
}

// aliasError says why an aliased size is not edited.
func aliasError(t Target, anchor string) error {
	return fmt.Errorf("%s: its size is under the anchor &%s, which an alias repeats elsewhere in the file; editing it would change that too, so it is not edited (give the template a size of its own)", t, anchor)
}
