package gitedit

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MaxFileBytes bounds the files edited: a manifest in Git is written by
// whoever may push there, and is parsed whole.
const MaxFileBytes = 1 << 20

// ErrNotSet says that no document of the file sets the target's size.
var ErrNotSet = errors.New("the file does not set the size")

// SetSize returns src, a YAML file of one or more documents (a manifest, or
// a strategic-merge patch), with the size of the target's claim template
// set to size, and whether that changed anything. Exactly one document may
// set it: two that do leave the edit ambiguous, and it is refused.
func SetSize(src []byte, t Target, size string) ([]byte, bool, error) {
	found, err := findSize(src, t)
	if err != nil {
		return nil, false, err
	}
	if found.node.Value == size {
		return src, false, nil
	}
	out, err := splice(src, found.node, size, found.flow)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", t, err)
	}
	return out, true, nil
}

// findSize is the one place in src that sets the target's size.
func findSize(src []byte, t Target) (setting, error) {
	if len(src) > MaxFileBytes {
		return setting{}, fmt.Errorf("%d bytes, more than the %d edited", len(src), MaxFileBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var found setting
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return setting{}, fmt.Errorf("reading YAML: %w", err)
		}
		if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
			continue
		}
		root := yaml.NewRNode(doc.Content[0])
		if !isTarget(root, t) {
			continue
		}
		s, err := templateStorage(root, t)
		if err != nil {
			return setting{}, err
		}
		if s.node == nil {
			continue
		}
		if found.node != nil {
			return setting{}, fmt.Errorf("%s: set on lines %d and %d; not edited", t, found.node.Line, s.node.Line)
		}
		found = s
	}
	if found.node == nil {
		return setting{}, fmt.Errorf("%s: %w", t, ErrNotSet)
	}
	return found, nil
}
