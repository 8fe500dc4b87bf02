package gitedit

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Inline is the values a tool object sets in its own manifest: the
// mapping at Field of the document of Kind and Name (and Namespace, unless
// the document names none), such as a HelmRelease's spec.values.
type Inline struct {
	Kind, Namespace, Name string
	Field                 []string
}

func (in Inline) String() string {
	return fmt.Sprintf("%s %s/%s's %s", in.Kind, in.Namespace, in.Name, strings.Join(in.Field, "."))
}

// ErrNotHeld says that no document of the file is the tool object whose
// values are edited; it wraps ErrNotSet.
var ErrNotHeld = fmt.Errorf("the file does not hold it: %w", ErrNotSet)

// SetInlineValuesSize is SetValuesSize for values set in a manifest: src,
// a manifest file, with the value of in's mapping that sets the target's
// size set to size, and whether that changed anything. The mapping is the
// edited values of r (r.Values is not read). ErrNotHeld when src holds
// no such document, an error wrapping ErrNotSet when its mapping sets no
// size.
func SetInlineValuesSize(ctx context.Context, r Release, src []byte, in Inline, t Target, size, key string) ([]byte, bool, error) {
	values, err := findInline(src, in)
	if err != nil {
		return nil, false, err
	}
	s, err := yaml.NewRNode(values.node).String()
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", in, err)
	}
	r.Values = []byte(s)
	// What the tool merges once the edit is merged: the mapping as the
	// edited manifest holds it.
	asValues := func(edited []byte) ([]byte, error) {
		v, err := findInline(edited, in)
		if err != nil {
			return nil, err
		}
		s, err := yaml.NewRNode(v.node).String()
		return []byte(s), err
	}
	return r.setValue(ctx, src, values, in.String(), t, size, key, asValues)
}

// findInline is the mapping in's document sets in src.
func findInline(src []byte, in Inline) (setting, error) {
	var found setting
	err := eachDocument(src, func(root *yaml.RNode) error {
		if root.YNode().Kind != yaml.MappingNode || root.GetKind() != in.Kind || root.GetName() != in.Name {
			return nil
		}
		if ns := root.GetNamespace(); ns != "" && ns != in.Namespace {
			return nil
		}
		if found.node != nil {
			return fmt.Errorf("%s %s/%s: on lines %d and %d; not edited", in.Kind, in.Namespace, in.Name, found.node.Line, root.YNode().Line)
		}
		n, flow := root.YNode(), false
		for _, key := range in.Field {
			flow = flow || n.Style&yaml.FlowStyle != 0
			if n = valueOf(n, key); n == nil {
				break
			}
		}
		switch {
		case n != nil && n.Kind == yaml.ScalarNode && n.Style&yaml.LiteralStyle != 0:
			var err error
			if n, err = literalValues(src, n); err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
		case n == nil || n.Kind != yaml.MappingNode:
			return fmt.Errorf("%s: no mapping: %w", in, ErrNotSet)
		}
		found = setting{node: n, flow: flow}
		return nil
	})
	if err != nil {
		return setting{}, err
	}
	if found.node == nil {
		return setting{}, ErrNotHeld
	}
	return found, nil
}

// literalValues is the mapping a literal block scalar (values: |) holds as
// text, such as an Application's helm.values, with each node placed where
// its text is in src: a literal block keeps its lines verbatim behind
// their indentation. A block with an indentation indicator (|2) is not
// read; splice checks every position before it edits.
func literalValues(src []byte, block *yaml.Node) (*yaml.Node, error) {
	start, err := offset(src, block.Line, block.Column)
	if err != nil {
		return nil, err
	}
	header, _, _ := strings.Cut(string(src[start:]), "\n")
	if strings.ContainsAny(strings.TrimSpace(header), "123456789") {
		return nil, fmt.Errorf("a literal block with an indentation indicator (%s) is not edited", strings.TrimSpace(header))
	}
	root, err := yaml.Parse(block.Value)
	if err != nil {
		return nil, fmt.Errorf("reading the values it holds: %w", err)
	}
	if root.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("it holds no mapping: %w", ErrNotSet)
	}
	indent := -1
	for _, line := range strings.Split(string(src[start+len(header):]), "\n")[1:] {
		if strings.TrimSpace(line) != "" {
			indent = len(line) - len(strings.TrimLeft(line, " "))
			break
		}
	}
	if indent < 0 {
		return nil, fmt.Errorf("its lines are not found: %w", ErrNotSet)
	}
	var shift func(n *yaml.Node)
	shift = func(n *yaml.Node) {
		n.Line += block.Line
		n.Column += indent
		for _, c := range n.Content {
			shift(c)
		}
	}
	shift(root.YNode())
	return root.YNode(), nil
}
