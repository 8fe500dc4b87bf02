package gitedit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MaxCandidates bounds the renders SetValuesSize makes: one per value of
// the file that reads as the current size.
const MaxCandidates = 32

// Release is a chart as it is released from Git: the chart, the release
// it renders as, and the values file in Git that the edit is made in.
type Release struct {
	// Chart is the chart's files, read from Git or an artifact; only the
	// Renderer loads them.
	Chart   []ChartFile
	Options common.ReleaseOptions
	// Values is the values file's content; its values override the
	// chart's defaults.
	Values []byte
	// Under and Over are the release's other values, unedited, in the
	// order the tool merges them (the later wins): the values files before
	// Values, and those after it (later files, a HelmRelease's spec.values).
	Under, Over [][]byte
	// Renderer renders the chart, out of the controller's process.
	Renderer Renderer
}

// SetValuesSize returns r.Values with the value that sets the target's
// size set to size, and whether that changed anything. The value is found
// by rendering, not by its key's name: each value of the file that reads
// as the template's current size is changed alone, as the edit would
// change the file, and the chart rendered; the one that moves the
// target's size and nothing else (no other template, no other document: an
// alias or a value shared with another StatefulSet would move them too) is
// it. key, a dotted path (persistence.size, replicas[0].size), names the
// value where rendering cannot tell (none or several move it). An error
// wrapping ErrNotSet when no value of the file sets the size.
func SetValuesSize(ctx context.Context, r Release, t Target, size, key string) ([]byte, bool, error) {
	if len(r.Values) > MaxFileBytes {
		return nil, false, fmt.Errorf("the values file has %d bytes, more than the %d edited", len(r.Values), MaxFileBytes)
	}
	root, err := yaml.Parse(string(r.Values))
	if err != nil {
		return nil, false, fmt.Errorf("reading the values file: %w", err)
	}
	asValues := func(edited []byte) ([]byte, error) { return edited, nil }
	return r.setValue(ctx, r.Values, setting{node: root.YNode()}, "the values file", t, size, key, asValues)
}

// setValue returns src with the one scalar under values (the mapping of
// r.Values, where it sits in src) that sets the target's size set to size;
// what names values in errors, asValues turns an edited src into the
// values it sets.
func (r Release) setValue(ctx context.Context, src []byte, values setting, what string, t Target, size, key string,
	asValues func(edited []byte) ([]byte, error)) ([]byte, bool, error) {
	// Rendered twice as it is: what differs between the two (a random
	// password, a timestamp) is no edit's doing, and is not compared.
	base, err := r.render(ctx, nil)
	if err != nil {
		return nil, false, err
	}
	current, ok := base[0].Sizes[ownKey(base[0].Sizes, t)]
	if !ok {
		return nil, false, fmt.Errorf("the rendered chart: %s: %w", t, ErrNotSet)
	}
	if current == size {
		return src, false, nil
	}
	leaves := candidates(values, current, key)
	edits := make([][]byte, len(leaves))
	variants := make([][]byte, len(leaves))
	for i, l := range leaves {
		if edits[i], err = splice(src, l.node, size, l.flow); err != nil {
			return nil, false, fmt.Errorf("values %s: %w", l.path, err)
		}
		if variants[i], err = asValues(edits[i]); err != nil {
			return nil, false, fmt.Errorf("values %s: %w", l.path, err)
		}
	}
	var after []Rendered
	if len(variants) > 0 {
		if after, err = r.render(ctx, variants); err != nil {
			return nil, false, err
		}
	}
	var found []int
	var sideEffect string
	for i, a := range after {
		moved, also := compare(base[0], base[1], a, t, size)
		switch {
		case moved && len(also) == 0:
			found = append(found, i)
		case moved && sideEffect == "":
			sideEffect = fmt.Sprintf("%s: the value %s of %s sets its size but also changes %s; not edited (give the template a value of its own)", t, leaves[i].path, what, strings.Join(also, ", "))
		}
	}
	switch len(found) {
	case 0:
		if sideEffect != "" {
			return nil, false, errors.New(sideEffect)
		}
		return nil, false, fmt.Errorf("%s: no value of %s sets its size %s (name it with %s): %w", t, what, current, keyAdvice(key), ErrNotSet)
	case 1:
		return edits[found[0]], true, nil
	}
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = leaves[f].path.String()
	}
	return nil, false, fmt.Errorf("%s: the values %s of %s all set its size; name one with %s", t, strings.Join(names, ", "), what, keyAdvice(key))
}

func keyAdvice(key string) string {
	if key != "" {
		return "another key than " + key
	}
	return "the StatefulSet's annotation claimwarden.dev/size-value"
}

// render renders the chart once per variant of the edited values (nil
// variants: twice as the values are).
func (r Release) render(ctx context.Context, variants [][]byte) ([]Rendered, error) {
	if variants == nil {
		variants = [][]byte{nil, nil}
	}
	return r.Renderer.Render(ctx, RenderJob{
		Chart: r.Chart, Release: r.Options.Name, Namespace: r.Options.Namespace,
		Layers: slices.Concat(r.Under, [][]byte{r.Values}, r.Over), Edited: len(r.Under), Variants: variants,
	})
}

// ownKey is the key of the target's size among a render's sizes: a chart
// that names no namespace renders into the release's, where the target is.
func ownKey(sizes map[string]string, t Target) string {
	if k := t.Namespace + "/" + t.StatefulSet + "/" + t.Template; sizes[k] != "" {
		return k
	}
	return "/" + t.StatefulSet + "/" + t.Template
}

// compare reports whether after sets the target's size to size, and what
// else it changes against base: other claim templates' sizes, documents
// (those base and again, two renders of the same values, disagree on are
// not compared).
func compare(base, again, after Rendered, t Target, size string) (moved bool, also []string) {
	own := ownKey(base.Sizes, t)
	moved = after.Sizes[own] == size
	for _, k := range slices.Sorted(maps.Keys(base.Sizes)) {
		if k != own && after.Sizes[k] != base.Sizes[k] {
			also = append(also, fmt.Sprintf("the size of %s from %s to %q", templateName(k), base.Sizes[k], after.Sizes[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(after.Sizes)) {
		if _, ok := base.Sizes[k]; !ok {
			also = append(also, "adds "+templateName(k))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(base.Docs)) {
		if again.Docs[k] == base.Docs[k] && after.Docs[k] != base.Docs[k] {
			also = append(also, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(after.Docs)) {
		if _, ok := base.Docs[k]; !ok {
			also = append(also, "adds "+k)
		}
	}
	return moved, also
}

// templateName says a sizes key (namespace/statefulset/template) in words.
func templateName(key string) string {
	ns, rest, _ := strings.Cut(key, "/")
	sts, tmpl, _ := strings.Cut(rest, "/")
	return Target{Namespace: ns, StatefulSet: sts, Template: tmpl}.String()
}

// leaf is a scalar of the values file, where it sits and its path.
type leaf struct {
	setting
	path valuePath
}

// candidates are the scalars under values that read as size current (as a
// quantity: 10Gi is 10240Mi), or the one at key when key is given, at most
// MaxCandidates.
func candidates(values setting, current, key string) []leaf {
	want, err := resource.ParseQuantity(current)
	if err != nil {
		return nil
	}
	var out []leaf
	var walk func(n *yaml.Node, path valuePath, flow bool)
	walk = func(n *yaml.Node, path valuePath, flow bool) {
		flow = flow || n.Style&yaml.FlowStyle != 0
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], append(path[:len(path):len(path)], n.Content[i].Value), flow)
			}
		case yaml.SequenceNode:
			for i, el := range n.Content {
				walk(el, append(path[:len(path):len(path)], i), flow)
			}
		case yaml.ScalarNode:
			q, err := resource.ParseQuantity(n.Value)
			matches := key == "" && err == nil && q.Cmp(want) == 0
			if (matches || (key != "" && path.String() == key)) && len(out) < MaxCandidates {
				out = append(out, leaf{setting{node: n, flow: flow}, path})
			}
		}
	}
	walk(values.node, nil, values.flow)
	return out
}

// valuePath is a value's place: map keys (string) and list indexes (int).
type valuePath []any

func (p valuePath) String() string {
	var b strings.Builder
	for _, e := range p {
		switch e := e.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(e) + "]")
		default:
			if b.Len() > 0 {
				b.WriteString(".")
			}
			fmt.Fprint(&b, e)
		}
	}
	return b.String()
}
