package gitedit

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Overlay is a kustomize overlay: its kustomization file, and how to read
// the files it names (paths relative to the overlay).
type Overlay struct {
	// Path is the kustomization file's path, Kustomization its content.
	Path          string
	Kustomization []byte
	Read          func(path string) ([]byte, error)
}

// Edit is one changed file.
type Edit struct {
	Path    string
	Content []byte
}

// SetOverlaySize edits the patch of the overlay that sets the target's
// size: a strategic-merge patch (a file under patches or
// patchesStrategicMerge, or an inline patch) or a JSON 6902 operation on
// /spec/volumeClaimTemplates/<index>/spec/resources/requests/storage,
// where index is the template's place in the StatefulSet the overlay
// builds. Without one, a manifest among the overlay's own resources (a
// file, not a base) that sets the size is edited. Without either (the
// size comes from a base) it adds a JSON 6902 patch to the kustomization: a strategic-merge patch of
// volumeClaimTemplates would replace the whole list. It returns the one
// file changed, or none when the size is already so.
func SetOverlaySize(o Overlay, t Target, index int, size string) ([]Edit, error) {
	if len(o.Kustomization) > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d edited", o.Path, len(o.Kustomization), MaxFileBytes)
	}
	root, err := yaml.Parse(string(o.Kustomization))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Path, err)
	}
	var found []Edit
	for _, field := range []string{"patches", "patchesStrategicMerge", "patchesJson6902"} {
		list, err := root.Pipe(yaml.Lookup(field))
		if err != nil || list == nil {
			continue
		}
		for _, entry := range list.Content() {
			e, err := o.editEntry(entry, t, index, size)
			if errors.Is(err, ErrNotSet) {
				continue
			}
			if err != nil {
				return nil, err
			}
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		if edits, err := o.editResource(root, t, size); err == nil || !errors.Is(err, ErrNotSet) {
			return edits, err
		}
		return o.addPatch(root, t, index, size)
	case 1:
		if found[0].Content == nil {
			return nil, nil
		}
		return found, nil
	}
	return nil, fmt.Errorf("%s: %d patches set the size of %s; not edited", o.Path, len(found), t)
}

// editEntry edits one patch entry; ErrNotSet when it does not set the size.
// An Edit without Content is a patch that sets it to size already.
func (o Overlay) editEntry(entry *yaml.Node, t Target, index int, size string) (Edit, error) {
	if entry.Kind == yaml.ScalarNode { // patchesStrategicMerge: a path or an inline patch
		if strings.Contains(entry.Value, "\n") {
			return o.editInline(entry, t, index, size)
		}
		return o.editFile(entry.Value, t, index, size)
	}
	if !targets(entry, t) {
		return Edit{}, ErrNotSet
	}
	var e Edit
	var err error
	switch p, inline := valueOf(entry, "path"), valueOf(entry, "patch"); {
	case p != nil:
		e, err = o.editFile(p.Value, t, index, size)
	case inline != nil:
		e, err = o.editInline(inline, t, index, size)
	default:
		return Edit{}, ErrNotSet
	}
	if err == nil && !exclusive(entry, t) {
		return Edit{}, fmt.Errorf("%s: the patch on line %d sets the size of %s, but its target may select other StatefulSets too, which the edit would grow; not edited (give its target the name %s alone)",
			o.Path, entry.Line, t, t.StatefulSet)
	}
	return e, err
}

// exclusive reports whether a patches entry selects the target's
// StatefulSet alone: no target (the patch names its object itself), or a
// target naming it literally (kustomize reads the name as a regular
// expression) without label or annotation selectors.
func exclusive(entry *yaml.Node, t Target) bool {
	sel := valueOf(entry, "target")
	if sel == nil {
		return true
	}
	name := valueOf(sel, "name")
	return name != nil && name.Value == t.StatefulSet && regexp.QuoteMeta(name.Value) == name.Value &&
		valueOf(sel, "labelSelector") == nil && valueOf(sel, "annotationSelector") == nil
}

// editResource edits the one manifest among the kustomization's
// resources that sets the size; ErrNotSet when none does. An entry that
// cannot be read as a file (a directory, a base, a remote URL, which are
// never fetched) is not one.
func (o Overlay) editResource(root *yaml.RNode, t Target, size string) ([]Edit, error) {
	list, err := root.Pipe(yaml.Lookup("resources"))
	if err != nil || list == nil || list.YNode().Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: %w", t, ErrNotSet)
	}
	var paths []string
	for _, entry := range list.Content() {
		if entry.Kind == yaml.ScalarNode && !strings.Contains(entry.Value, "://") && isManifestName(entry.Value) {
			paths = append(paths, path.Join(path.Dir(o.Path), entry.Value))
		}
	}
	edits, err := SetSizeInOne(paths, func(p string) ([]byte, error) {
		src, err := o.Read(p)
		if err != nil {
			return nil, nil // not a file of the overlay: sets nothing
		}
		return src, nil
	}, t, size)
	var several *SetInSeveral
	if errors.As(err, &several) {
		return nil, fmt.Errorf("%s: %d resources set the size of %s; not edited", o.Path, len(several.Paths), t)
	}
	return edits, err
}

// isManifestName reports whether name is a YAML or JSON file's.
func isManifestName(name string) bool {
	switch path.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// targets reports whether a patches entry's target selects the target's
// StatefulSet, or the entry has none (the patch names its object itself).
func targets(entry *yaml.Node, t Target) bool {
	sel := valueOf(entry, "target")
	if sel == nil {
		return true
	}
	kind, name := valueOf(sel, "kind"), valueOf(sel, "name")
	return (kind == nil || kind.Value == "StatefulSet") && (name == nil || namePattern(name.Value, t.StatefulSet))
}

// namePattern reports whether a patch target's name selects name: kustomize
// reads it as a regular expression of the whole name.
func namePattern(pattern, name string) bool {
	re, err := regexp.Compile("^(?:" + pattern + ")$")
	if err != nil {
		return pattern == name
	}
	return re.MatchString(name)
}

// editFile edits a patch file of the overlay.
func (o Overlay) editFile(name string, t Target, index int, size string) (Edit, error) {
	p := path.Join(path.Dir(o.Path), name)
	src, err := o.Read(p)
	if err != nil {
		return Edit{}, fmt.Errorf("reading patch %s: %w", p, err)
	}
	out, changed, err := setPatchSize(src, t, index, size)
	if err != nil {
		return Edit{}, fmt.Errorf("%s: %w", p, err)
	}
	if !changed {
		return Edit{Path: p}, nil
	}
	return Edit{Path: p, Content: out}, nil
}

// editInline edits a patch written in the kustomization as a block scalar:
// the patch's own positions are moved to the kustomization's lines.
func (o Overlay) editInline(n *yaml.Node, t Target, index int, size string) (Edit, error) {
	found, err := patchSize([]byte(n.Value), t, index)
	if err != nil {
		return Edit{}, fmt.Errorf("%s: inline patch on line %d: %w", o.Path, n.Line, err)
	}
	if found.node.Value == size {
		return Edit{Path: o.Path}, nil
	}
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 || n.Style&yaml.FoldedStyle != 0 {
		return Edit{}, fmt.Errorf("%s: the inline patch on line %d sets the size but is not a literal block (|): not edited", o.Path, n.Line)
	}
	// The block's text starts on the line after its indicator, indented.
	first := n.Line + 1
	start, err := offset(o.Kustomization, first, 1)
	if err != nil {
		return Edit{}, err
	}
	indent := len(o.Kustomization[start:]) - len(bytes.TrimLeft(o.Kustomization[start:], " "))
	moved := *found.node
	moved.Line, moved.Column = first+found.node.Line-1, indent+found.node.Column
	out, err := splice(o.Kustomization, &moved, size, found.flow)
	if err != nil {
		return Edit{}, fmt.Errorf("%s: %w", o.Path, err)
	}
	return Edit{Path: o.Path, Content: out}, nil
}

// setPatchSize is SetSize for a patch: a strategic-merge patch, or a list
// of JSON 6902 operations.
func setPatchSize(src []byte, t Target, index int, size string) ([]byte, bool, error) {
	found, err := patchSize(src, t, index)
	if err != nil {
		return nil, false, err
	}
	if found.node.Value == size {
		return src, false, nil
	}
	out, err := splice(src, found.node, size, found.flow)
	return out, err == nil, err
}

// patchSize is where a patch sets the size: a JSON 6902 operation's value,
// or a strategic-merge patch's template.
func patchSize(src []byte, t Target, index int) (setting, error) {
	root, err := yaml.Parse(string(src))
	if err != nil {
		return setting{}, fmt.Errorf("reading the patch: %w", err)
	}
	if root.YNode().Kind != yaml.SequenceNode {
		return findSize(src, t)
	}
	want := "/spec/volumeClaimTemplates/" + strconv.Itoa(index) + "/spec/resources/requests/storage"
	var found setting
	for _, op := range root.Content() {
		p, v := valueOf(op, "path"), valueOf(op, "value")
		kind := valueOf(op, "op")
		if p == nil || p.Value != want || v == nil || kind == nil || (kind.Value != "replace" && kind.Value != "add") {
			continue
		}
		if v.Kind != yaml.ScalarNode || found.node != nil {
			return setting{}, fmt.Errorf("%s: the operation on %s is not one scalar value", t, want)
		}
		if anchor, ok := aliased(root.YNode(), v); ok {
			return setting{}, aliasError(t, anchor)
		}
		found = setting{node: v, flow: op.Style&yaml.FlowStyle != 0 || root.YNode().Style&yaml.FlowStyle != 0}
	}
	if found.node == nil {
		return setting{}, fmt.Errorf("%s: %w", t, ErrNotSet)
	}
	return found, nil
}

// addPatch adds to the kustomization a JSON 6902 patch that sets the
// size: as the first entry of its patches (in their indentation), or a
// patches list at its end. Nothing else of the file changes.
func (o Overlay) addPatch(root *yaml.RNode, t Target, index int, size string) ([]Edit, error) {
	ops := fmt.Sprintf("- op: replace\n  path: /spec/volumeClaimTemplates/%d/spec/resources/requests/storage\n  value: %s\n", index, size)
	entry := fmt.Sprintf("- target:\n    kind: StatefulSet\n    name: %s\n  patch: |-\n%s", t.StatefulSet, indent(ops, "    "))
	src := o.Kustomization
	var out []byte
	switch list, _ := root.Pipe(yaml.Lookup("patches")); {
	case list == nil:
		out = append(bytes.TrimRight(append([]byte{}, src...), "\n"), "\n\npatches:\n"+indent(entry, "  ")...)
	case list.YNode().Kind == yaml.SequenceNode && list.YNode().Style&yaml.FlowStyle == 0 && len(list.Content()) > 0:
		first := list.Content()[0]
		start, err := offset(src, first.Line, 1)
		if err != nil {
			return nil, err
		}
		dash := bytes.IndexByte(src[start:], '-')
		if dash < 0 || strings.TrimLeft(string(src[start:start+dash]), " ") != "" {
			return nil, fmt.Errorf("%s: cannot find the first entry of patches on line %d", o.Path, first.Line)
		}
		out = append(append(append([]byte{}, src[:start]...), indent(entry, string(src[start:start+dash]))...), src[start:]...)
	default:
		return nil, fmt.Errorf("%s: its patches are not a block list; add the patch for %s by hand", o.Path, t)
	}
	return []Edit{{Path: o.Path, Content: out}}, nil
}

// indent prefixes every line of s with prefix.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
