package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsyaml "sigs.k8s.io/yaml"
)

// Decode reads a stream of manifests: YAML documents separated by "---",
// or JSON values one after the other. Empty documents are skipped; the
// items of a List (kubectl get -o yaml) become objects of their own. Errors
// name file and line. file names the stream in locations and messages.
//
// Values are read as kubectl reads them (sigs.k8s.io/yaml: "on" is true,
// numbers are int64 or float64), and positions come from a YAML node tree
// (go.yaml.in/yaml/v3) of the same document.
func Decode(r io.Reader, file string) ([]Object, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if looksLikeJSON(data) {
		return decodeJSON(data, file)
	}
	return decodeYAML(data, file)
}

// looksLikeJSON is kubectl's test (YAMLOrJSONDecoder): JSON starts with "{" or "[".
func looksLikeJSON(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
}

func decodeYAML(data []byte, file string) ([]Object, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []Object
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, yamlError(file, err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue // "---" followed by nothing but comments
		}
		loc := Location{File: file, Line: root.Line}
		if root.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: the document is a %s, not a Kubernetes object", loc, nodeKind(root))
		}
		if err := checkDuplicateKeys(root, file); err != nil {
			return nil, err
		}
		// The node tree is encoded again and read the way kubectl reads
		// YAML, so that values (booleans, numbers, anchors, merge keys) mean
		// what they mean to the API server.
		text, err := yaml.Marshal(&doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", loc, err)
		}
		js, err := sigsyaml.YAMLToJSON(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", loc, err)
		}
		objs, err := objectsOf(js, root, loc)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
}

func decodeJSON(data []byte, file string) ([]Object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []Object
	for {
		start := int(dec.InputOffset())
		start += len(data[start:]) - len(bytes.TrimLeft(data[start:], " \t\r\n"))
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			line := lineAt(data, start)
			var se *json.SyntaxError
			if errors.As(err, &se) {
				line = lineAt(data, int(se.Offset))
			}
			return nil, fmt.Errorf("%s: invalid JSON: %w", Location{File: file, Line: line}, err)
		}
		loc := Location{File: file, Line: lineAt(data, start)}
		if raw[0] != '{' {
			return nil, fmt.Errorf("%s: the document is a %s, not a Kubernetes object", loc, jsonKind(raw[0]))
		}
		// JSON is YAML: its node tree gives the fields' lines. A value the
		// YAML parser refuses still decodes, with the object's line only.
		var doc yaml.Node
		var root *yaml.Node
		if yaml.Unmarshal(raw, &doc) == nil && len(doc.Content) == 1 {
			root = doc.Content[0]
			shiftLines(root, loc.Line-1)
		}
		objs, err := objectsOf(raw, root, loc)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
}

// objectsOf decodes one JSON object into an Object, or into one Object per
// item when it is a List.
func objectsOf(js []byte, node *yaml.Node, loc Location) ([]Object, error) {
	var m map[string]any
	// apimachinery's json keeps whole numbers int64, as unstructured objects need.
	if err := utiljson.Unmarshal(js, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	obj := Object{Unstructured: &unstructured.Unstructured{Object: m}, Location: loc, node: node}
	items, isList := m["items"].([]any)
	if !isList || !strings.HasSuffix(obj.GetKind(), "List") {
		return []Object{obj}, nil
	}
	out := make([]Object, 0, len(items))
	for i, item := range items {
		itemLoc := obj.locate("items", i)
		im, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: items[%d] of the %s is not an object", itemLoc, i, obj.GetKind())
		}
		var itemNode *yaml.Node
		if items, _ := childNode(node, "items"); items != nil {
			itemNode, _ = child(items, i)
		}
		out = append(out, Object{Unstructured: &unstructured.Unstructured{Object: im}, Location: itemLoc, node: itemNode})
	}
	return out, nil
}

// childNode is child for a node that may be nil.
func childNode(n *yaml.Node, p any) (*yaml.Node, int) {
	if n == nil {
		return nil, 0
	}
	return child(n, p)
}

// checkDuplicateKeys refuses a mapping that repeats a key. Both YAML
// readers keep the last value silently, so `storage: 10Gi` followed by
// `storage: 20Gi` would check a size the author did not mean; the API
// server refuses such objects (duplicate field) too.
func checkDuplicateKeys(n *yaml.Node, file string) error {
	if n.Kind == yaml.MappingNode {
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.Value != "<<" {
				if first, dup := seen[k.Value]; dup {
					return fmt.Errorf("%s: key %q is repeated (first at line %d)", Location{File: file, Line: k.Line}, k.Value, first)
				}
				seen[k.Value] = k.Line
			}
		}
	}
	for _, c := range n.Content {
		if err := checkDuplicateKeys(c, file); err != nil {
			return err
		}
	}
	return nil
}

// shiftLines moves a node tree parsed from part of a file to the file's lines.
func shiftLines(n *yaml.Node, by int) {
	n.Line += by
	for _, c := range n.Content {
		shiftLines(c, by)
	}
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

func jsonKind(first byte) string {
	if first == '[' {
		return "list"
	}
	return "single value"
}
