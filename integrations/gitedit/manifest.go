package gitedit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

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
	var found setting
	err := eachDocument(src, func(root *yaml.RNode) error {
		if !isTarget(root, t) {
			return nil
		}
		s, err := templateStorage(root, t)
		if err != nil || s.node == nil {
			return err
		}
		if anchor, ok := aliased(root.YNode(), s.node); ok {
			return aliasError(t, anchor)
		}
		if found.node != nil {
			return fmt.Errorf("%s: set on lines %d and %d; not edited", t, found.node.Line, s.node.Line)
		}
		found = s
		return nil
	})
	if err != nil {
		return setting{}, err
	}
	if found.node == nil {
		return setting{}, fmt.Errorf("%s: %w", t, ErrNotSet)
	}
	return found, nil
}

// eachDocument calls fn with the root of each document of src, a file of
// at most MaxFileBytes, in order, until fn fails.
func eachDocument(src []byte, fn func(root *yaml.RNode) error) error {
	if len(src) > MaxFileBytes {
		return fmt.Errorf("%d bytes, more than the %d edited", len(src), MaxFileBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading YAML: %w", err)
		}
		if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
			continue
		}
		if err := fn(yaml.NewRNode(doc.Content[0])); err != nil {
			return err
		}
	}
}

// SetInSeveral says that several files set the target's size: which one
// to edit is ambiguous, and none is.
type SetInSeveral struct{ Paths []string }

func (e *SetInSeveral) Error() string {
	return strings.Join(e.Paths, ", ") + " all set the size; not edited"
}

// SetSizeInOne is SetSize over files: of the files at paths, read by
// read, exactly one may set the target's size, and it is edited (no Edit
// when it has that size already). An error wrapping ErrNotSet when none
// sets it, a *SetInSeveral when more than one does.
func SetSizeInOne(paths []string, read func(path string) ([]byte, error), t Target, size string) ([]Edit, error) {
	edits, err := EditInOne(paths, read, func(src []byte) ([]byte, bool, error) { return SetSize(src, t, size) }, ErrNotSet)
	if err == ErrNotSet { // EditInOne's answer when no file sets it
		return nil, fmt.Errorf("%s: %w", t, ErrNotSet)
	}
	return edits, err
}

// EditInOne applies edit to the files at paths, read by read: a file
// whose edit fails with skip is not the one, and exactly one other may
// be. Its Edit is returned (none when edit changed nothing); ErrNotSet
// itself when no file is the one, a *SetInSeveral when several are.
func EditInOne(paths []string, read func(path string) ([]byte, error), edit func(src []byte) ([]byte, bool, error), skip error) ([]Edit, error) {
	var found []Edit
	for _, p := range paths {
		src, err := read(p)
		if err != nil {
			return nil, err
		}
		out, changed, err := edit(src)
		switch {
		case errors.Is(err, skip):
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: %w", p, err)
		case changed:
			found = append(found, Edit{Path: p, Content: out})
		default:
			found = append(found, Edit{Path: p})
		}
	}
	switch len(found) {
	case 0:
		return nil, ErrNotSet
	case 1:
		if found[0].Content == nil {
			return nil, nil
		}
		return found, nil
	}
	several := &SetInSeveral{}
	for _, e := range found {
		several.Paths = append(several.Paths, e.Path)
	}
	return nil, several
}
