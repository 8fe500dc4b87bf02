package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsyaml "sigs.k8s.io/yaml"
)

// Decode reads a stream of manifests: YAML documents separated by "---"
// lines, or JSON values one after the other. Empty documents are skipped;
// the items of a List (kubectl get -o yaml) become objects of their own,
// Lists inside Lists too, as kubectl flattens them. Errors name file and
// line. file names the stream in locations and messages. The default
// Limits apply; Limits.Decode takes others.
//
// Documents are read as kubectl reads them (sigs.k8s.io/yaml: YAML 1.1,
// "on" is true, whole numbers are int64, a repeated key is an error). The
// lines of fields are found in a YAML node tree of the document, built only
// when a message needs one.
func Decode(r io.Reader, file string) ([]Object, error) {
	return Limits{}.Decode(r, file)
}

func decode[T any](r io.Reader, file string, b *budget, v visit[T]) error {
	data, err := b.read(r, file)
	if err != nil {
		return err
	}
	if looksLikeJSON(data) {
		return decodeJSON(data, file, b, v)
	}
	docs, err := splitDocuments(data, file, b)
	if err != nil {
		return err
	}
	// Documents are independent: a stream of thousands is read on every
	// core, and yielded in order.
	return decodeInOrder(docs, file, b, v)
}

// looksLikeJSON is kubectl's test (YAMLOrJSONDecoder): JSON starts with "{" or "[".
func looksLikeJSON(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
}

// decodeDocument reads one YAML document: none, one object, or the items
// of (nested) Lists.
func decodeDocument(d *document, file string, b *budget) ([]Object, error) {
	if err := checkAliases(d, file, b.Limits); err != nil {
		return nil, err
	}
	js, err := sigsyaml.YAMLToJSONStrict(d.text)
	if err != nil {
		return nil, yamlError(file, d, err)
	}
	if bytes.Equal(js, []byte("null")) {
		return nil, nil // only comments, or nothing
	}
	loc := Location{File: file, Line: d.contentLine()}
	if js[0] != '{' {
		return nil, fmt.Errorf("%s: the document is a %s, not a Kubernetes object", loc, jsonKind(js[0]))
	}
	return objectsOf(js, d, loc, b)
}

// splitDocuments cuts a YAML stream at its "---" lines, as kubectl's
// YAMLReader does, keeping the line each document starts on (the reader
// does not tell). A separator line may carry a comment, not content.
func splitDocuments(data []byte, file string, b *budget) ([]*document, error) {
	var docs []*document
	start, startLine, line := 0, 1, 1
	for off := 0; off < len(data); line++ {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		text := data[off:next]
		if rest, ok := bytes.CutPrefix(text, []byte("---")); ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' || rest[0] == '\n') {
			if r := bytes.TrimSpace(rest); len(r) > 0 && r[0] != '#' {
				return nil, fmt.Errorf("%s: content after the document separator %q: start the document on the next line", Location{File: file, Line: line}, strings.TrimSpace(string(text)))
			}
			if err := b.document(Location{File: file, Line: startLine}); err != nil {
				return nil, err
			}
			if err := b.documentSize(Location{File: file, Line: startLine}, off-start); err != nil {
				return nil, err
			}
			docs = append(docs, &document{text: data[start:off], firstLine: startLine})
			start, startLine = next, line+1
		}
		off = next
	}
	if err := b.document(Location{File: file, Line: startLine}); err != nil {
		return nil, err
	}
	if err := b.documentSize(Location{File: file, Line: startLine}, len(data)-start); err != nil {
		return nil, err
	}
	return append(docs, &document{text: data[start:], firstLine: startLine}), nil
}

// decodeJSON reads JSON values one after the other, on one core: where a
// value ends is known only once the one before it is read.
func decodeJSON[T any](data []byte, file string, b *budget, v visit[T]) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		start := int(dec.InputOffset())
		start += len(data[start:]) - len(bytes.TrimLeft(data[start:], " \t\r\n"))
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			line := lineAt(data, start)
			var se *json.SyntaxError
			if errors.As(err, &se) {
				line = lineAt(data, int(se.Offset))
			}
			return fmt.Errorf("%s: invalid JSON: %w", Location{File: file, Line: line}, err)
		}
		loc := Location{File: file, Line: lineAt(data, start)}
		if err := b.document(loc); err != nil {
			return err
		}
		if err := b.documentSize(loc, len(raw)); err != nil {
			return err
		}
		if raw[0] != '{' {
			return fmt.Errorf("%s: the document is a %s, not a Kubernetes object", loc, jsonKind(raw[0]))
		}
		// JSON is YAML: the node tree of the value gives its fields' lines.
		objs, err := objectsOf(raw, &document{text: raw, firstLine: loc.Line}, loc, b)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := v.yield(o, v.prepare(o)); err != nil {
				return err
			}
		}
	}
}

// objectsOf decodes one JSON object into an Object, or into one Object per
// item when it is a List, flattening Lists inside it, and charges them to
// b: their values, the keys of every mapping, the items as documents.
func objectsOf(js []byte, doc *document, loc Location, b *budget) ([]Object, error) {
	var m map[string]any
	// apimachinery's json keeps whole numbers int64, as unstructured objects need.
	if err := utiljson.Unmarshal(js, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	obj := Object{Unstructured: &unstructured.Unstructured{Object: m}, Location: loc, doc: doc}
	nodes, err := countValues(obj, m, b.Keys)
	if err != nil {
		return nil, err
	}
	if err := b.spend(loc, nodes); err != nil {
		return nil, err
	}
	var out []Object
	if err := flatten(obj, 0, &out, b); err != nil {
		return nil, err
	}
	return out, nil
}

// flatten appends obj to out, or the items of obj when it is a List, as
// cli-runtime's FlattenListVisitor does, depth being the Lists around it.
func flatten(obj Object, depth int, out *[]Object, b *budget) error {
	items, isList := obj.Object["items"].([]any)
	if !isList || !strings.HasSuffix(obj.GetKind(), "List") {
		*out = append(*out, obj)
		return nil
	}
	if depth == maxListDepth {
		return fmt.Errorf("%s: Lists nested deeper than %d", obj.describe(), maxListDepth)
	}
	for i, item := range items {
		path := append(slices.Clone(obj.path), "items", i)
		itemLoc := obj.locate("items", i)
		im, ok := item.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: items[%d] of the %s is not an object", itemLoc, i, obj.GetKind())
		}
		if err := b.document(itemLoc); err != nil {
			return err
		}
		o := Object{Unstructured: &unstructured.Unstructured{Object: im}, Location: itemLoc, doc: obj.doc, path: path}
		if err := flatten(o, depth+1, out, b); err != nil {
			return err
		}
	}
	return nil
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

func jsonKind(first byte) string {
	if first == '[' {
		return "list"
	}
	return "single value"
}
