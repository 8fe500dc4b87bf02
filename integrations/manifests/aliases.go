package manifests

import (
	"bytes"
	"fmt"
	"math"

	"go.yaml.in/yaml/v3"
)

// checkAliases refuses a document whose YAML aliases expand it beyond the
// limits. The decoder of sigs.k8s.io/yaml (go.yaml.in/yaml/v2) refuses only
// alias ratios typical of a "billion laughs", not a few thousand uses of
// one long string, which it expands in full: 125 KB become gigabytes. The
// node tree of go.yaml.in/yaml/v3 keeps an alias as a pointer to its
// anchor, so the expanded size is counted here without expanding anything.
// Only a document with an anchor and an alias mark needs the tree.
func checkAliases(d *document, file string, l Limits) error {
	if bytes.IndexByte(d.text, '&') < 0 || bytes.IndexByte(d.text, '*') < 0 {
		return nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(d.text, &root); err != nil {
		// Fail closed: what cannot be measured is not expanded either.
		return yamlError(file, d, err)
	}
	var e AliasSizer
	size, err := e.of(&root)
	loc := Location{File: file, Line: d.contentLine()}
	switch {
	case err != nil:
		return fmt.Errorf("%s: invalid YAML: %w", loc, err)
	case size.bytes > l.Bytes:
		return fmt.Errorf("%s: the document's aliases expand it to more than the limit of %s bytes (%d)", loc, binary(l.Bytes), l.Bytes)
	case size.nodes > int64(l.Nodes):
		return fmt.Errorf("%s: the document's aliases expand it to more than the limit of %d values", loc, l.Nodes)
	}
	return nil
}

// expanded is the size of a node with its aliases replaced by what they name.
type expanded struct{ nodes, bytes int64 }

// AliasSizer sizes nodes of a go.yaml.in/yaml/v3 tree with their aliases
// replaced by what they name, without expanding them: each node is walked
// once, so an anchor used a thousand times is counted a thousand times and
// walked once. One sizer serves one tree (the Flux build's input limits
// use it too). The zero value is ready to use.
type AliasSizer struct {
	sizes map[*yaml.Node]expanded
	// open are the nodes being sized: an alias to one of them names its own ancestor.
	open map[*yaml.Node]bool
}

// Size is n's expanded size in nodes and scalar bytes, saturated at
// math.MaxInt64; an alias to its own ancestor is an error.
func (e *AliasSizer) Size(n *yaml.Node) (nodes, bytes int64, err error) {
	s, err := e.of(n)
	return s.nodes, s.bytes, err
}

func (e *AliasSizer) of(n *yaml.Node) (expanded, error) {
	if s, ok := e.sizes[n]; ok {
		return s, nil
	}
	if e.sizes == nil {
		e.sizes, e.open = map[*yaml.Node]expanded{}, map[*yaml.Node]bool{}
	}
	if e.open[n] {
		return expanded{}, fmt.Errorf("line %d: anchor %q contains an alias to itself", n.Line, n.Anchor)
	}
	e.open[n] = true
	defer delete(e.open, n)
	s := expanded{nodes: 1, bytes: int64(len(n.Value))}
	if n.Kind == yaml.AliasNode {
		a, err := e.of(n.Alias)
		if err != nil {
			return expanded{}, err
		}
		s = a
	}
	for _, c := range n.Content {
		cs, err := e.of(c)
		if err != nil {
			return expanded{}, err
		}
		s.nodes, s.bytes = saturated(s.nodes, cs.nodes), saturated(s.bytes, cs.bytes)
	}
	e.sizes[n] = s
	return s, nil
}

// saturated is a+b, or math.MaxInt64 where that overflows: nested aliases
// multiply sizes beyond any integer.
func saturated(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
