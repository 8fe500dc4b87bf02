// Package manifests decodes Kubernetes manifests — files, directories,
// standard input, the output of a kustomize build — into objects that
// remember where they were written, and picks out the StatefulSets among
// them with errors that name the file, the line and the field.
//
// `claimwarden check` reads pull-request manifests with it, and the Flux
// integration reads its kustomize builds with it, so both see the same
// objects.
package manifests

import (
	"fmt"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Location is where an object (or one of its fields) was written.
type Location struct {
	// File is the path as given, "stdin", or for built objects what built
	// them, e.g. "kustomize build overlays/prod".
	File string
	// Line is 1-based; 0 when unknown (built objects).
	Line int
}

// String is "file:line", or the file alone when the line is unknown.
func (l Location) String() string {
	if l.Line > 0 {
		return fmt.Sprintf("%s:%d", l.File, l.Line)
	}
	return l.File
}

// Object is one decoded document (or one item of a List).
type Object struct {
	*unstructured.Unstructured
	// Location is where the object starts: the line of its first key.
	Location
	// doc is the document the object was read from, for the line of a
	// field, and path the object's place in it (an item of a List); doc is
	// nil when positions are unknown.
	doc  *document
	path []any
}

// FromUnstructured wraps objects produced elsewhere, e.g. by a kustomize
// build, naming source as their file; their lines are unknown.
func FromUnstructured(objs []*unstructured.Unstructured, source string) []Object {
	out := make([]Object, 0, len(objs))
	for _, u := range objs {
		out = append(out, Object{Unstructured: u, Location: Location{File: source}})
	}
	return out
}

// Warning is something worth telling about an input that does not stop it
// from being used.
type Warning struct {
	Location
	Message string
}

func (w Warning) String() string { return w.Location.String() + ": " + w.Message }

// describe names an object in messages: "StatefulSet shop/web (a.yaml:12)".
func (o Object) describe() string {
	return o.describeAt(o.Location)
}

// describeAt is describe with the location of one of the object's fields.
func (o Object) describeAt(loc Location) string {
	kind := o.GetKind()
	if kind == "" {
		kind = "object without kind"
	}
	name := o.GetName()
	if ns := o.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s %s (%s)", kind, name, loc)
}

// locate returns where the field at path (map keys as strings, list
// indices as ints) was written: the line of the deepest part of the path
// found (a key's own line), else the object's location.
func (o Object) locate(path ...any) Location {
	loc := o.Location
	if o.doc == nil {
		return loc
	}
	n := o.doc.node()
	for _, p := range o.path {
		if n == nil {
			return loc
		}
		n, _ = child(n, p)
	}
	for _, p := range path {
		if n == nil {
			break
		}
		var line int
		n, line = child(n, p)
		if line > 0 {
			loc.Line = line
		}
	}
	return loc
}

// child returns the value of key p in mapping n, or item p of sequence n,
// and the line of the key or item; nil when there is none.
func child(n *yaml.Node, p any) (*yaml.Node, int) {
	switch k := p.(type) {
	case string:
		if n.Kind != yaml.MappingNode {
			return nil, 0
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				return n.Content[i+1], n.Content[i].Line
			}
		}
	case int:
		if n.Kind == yaml.SequenceNode && k >= 0 && k < len(n.Content) {
			return n.Content[k], n.Content[k].Line
		}
	}
	return nil, 0
}
