package gitedit

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MaxCandidates bounds the renders SetValuesSize makes: one per value of
// the file that reads as the current size.
const MaxCandidates = 32

// Release is a chart as it is released from Git: the chart, the release
// it renders as, and the values file in Git that the edit is made in.
type Release struct {
	Chart   *chartv2.Chart
	Options common.ReleaseOptions
	// Values is the values file's content; its values override the
	// chart's defaults.
	Values []byte
	// Under and Over are the release's other values, unedited, in the
	// order the tool merges them (the later wins): the values files before
	// Values, and those after it (later files, a HelmRelease's spec.values).
	Under, Over [][]byte
}

// SetValuesSize returns r.Values with the value that sets the target's
// size set to size, and whether that changed anything. The value is found
// by rendering, not by its key's name: each value of the file that reads
// as the template's current size is changed alone and the chart rendered,
// and the one that moves the target's size, and no other template's, is
// it. key, a dotted path (persistence.size, replicas[0].size), names the
// value where rendering cannot tell (none or several move it). An error
// wrapping ErrNotSet when no value of the file sets the size.
func SetValuesSize(r Release, t Target, size, key string) ([]byte, bool, error) {
	if len(r.Values) > MaxFileBytes {
		return nil, false, fmt.Errorf("the values file has %d bytes, more than the %d edited", len(r.Values), MaxFileBytes)
	}
	root, err := yaml.Parse(string(r.Values))
	if err != nil {
		return nil, false, fmt.Errorf("reading the values file: %w", err)
	}
	return r.setValue(r.Values, setting{node: root.YNode()}, "the values file", t, size, key)
}

// setValue returns src with the one scalar under values (the mapping of
// r.Values, where it sits in src) that sets the target's size set to size;
// what names values in errors.
func (r Release) setValue(src []byte, values setting, what string, t Target, size, key string) ([]byte, bool, error) {
	before, err := r.render(nil, "")
	if err != nil {
		return nil, false, err
	}
	current, err := renderedSize(before, t)
	if err != nil {
		return nil, false, err
	}
	if current == size {
		return src, false, nil
	}
	var found []leaf
	for _, l := range candidates(values, current, key) {
		after, err := r.render(l.path, size)
		if err != nil {
			return nil, false, err
		}
		if moves(before, after, t, size) {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 0:
		return nil, false, fmt.Errorf("%s: no value of %s sets its size %s (name it with %s): %w", t, what, current, keyAdvice(key), ErrNotSet)
	case 1:
	default:
		names := make([]string, len(found))
		for i, l := range found {
			names[i] = l.path.String()
		}
		return nil, false, fmt.Errorf("%s: the values %s of %s all set its size; name one with %s", t, strings.Join(names, ", "), what, keyAdvice(key))
	}
	out, err := splice(src, found[0].node, size, found[0].flow)
	if err != nil {
		return nil, false, fmt.Errorf("values %s: %w", found[0].path, err)
	}
	return out, true, nil
}

func keyAdvice(key string) string {
	if key != "" {
		return "another key than " + key
	}
	return "the StatefulSet's annotation claimwarden.dev/size-value"
}

// render renders the chart with the release's values, the value at path
// of the edited values set to value when path is not nil, and returns the
// manifests.
func (r Release) render(path valuePath, value string) ([]byte, error) {
	vals := map[string]any{}
	for i, layer := range slices.Concat(r.Under, [][]byte{r.Values}, r.Over) {
		v, err := common.ReadValues(layer)
		if err != nil {
			return nil, fmt.Errorf("reading values: %w", err)
		}
		if i == len(r.Under) && path != nil {
			if err := path.set(v, value); err != nil {
				return nil, err
			}
		}
		// MergeTables keeps its first argument's values: the later layer's.
		vals = util.MergeTables(v, vals)
	}
	top, err := util.ToRenderValues(r.Chart, vals, r.Options, nil)
	if err != nil {
		return nil, fmt.Errorf("values of chart %s: %w", r.Chart.Name(), err)
	}
	files, err := engine.Render(r.Chart, top)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", r.Chart.Name(), err)
	}
	var out bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
			out.WriteString("\n---\n")
			out.WriteString(files[name])
		}
	}
	return out.Bytes(), nil
}

// renderedSize is the target's size in rendered manifests.
func renderedSize(manifests []byte, t Target) (string, error) {
	s, err := findSize(manifests, t)
	if err != nil {
		return "", fmt.Errorf("the rendered chart: %w", err)
	}
	return s.node.Value, nil
}

// moves reports whether after sets the target's size to size and every
// other claim template of every StatefulSet in it as before: a value
// shared with another template is not the target's own.
func moves(before, after []byte, t Target, size string) bool {
	b, a := templateSizes(before), templateSizes(after)
	if len(a) != len(b) {
		return false
	}
	// A chart that names no namespace renders into the release's, where
	// the target is (isTarget).
	own := func(k string) bool {
		return k == t.Namespace+"/"+t.StatefulSet+"/"+t.Template || k == "/"+t.StatefulSet+"/"+t.Template
	}
	for k, v := range b {
		switch {
		case own(k) && a[k] != size:
			return false
		case !own(k) && a[k] != v:
			return false
		}
	}
	return true
}

// templateSizes maps namespace/statefulset/template to its size, for
// every claim template of every StatefulSet in manifests.
func templateSizes(manifests []byte) map[string]string {
	out := map[string]string{}
	nodes, err := kio.FromBytes(manifests)
	if err != nil {
		return out
	}
	for _, doc := range nodes {
		if doc.GetKind() != "StatefulSet" {
			continue
		}
		list, err := doc.Pipe(yaml.Lookup("spec", "volumeClaimTemplates"))
		if err != nil || list == nil {
			continue
		}
		for _, el := range list.Content() {
			name := valueOf(valueOf(el, "metadata"), "name")
			s, err := storageOf(el, Target{}, false)
			if name != nil && err == nil && s.node != nil {
				out[doc.GetNamespace()+"/"+doc.GetName()+"/"+name.Value] = s.node.Value
			}
		}
	}
	return out
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

// set sets the value at p in vals (decoded from the same file, so p exists).
func (p valuePath) set(vals map[string]any, value string) error {
	var cur any = vals
	for i, e := range p {
		last := i == len(p)-1
		switch e := e.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return fmt.Errorf("values %s: not a map", p[:i])
			}
			if last {
				m[e] = value
				return nil
			}
			cur = m[e]
		case int:
			l, ok := cur.([]any)
			if !ok || e >= len(l) {
				return fmt.Errorf("values %s: not a list of %d", p[:i], e+1)
			}
			if last {
				l[e] = value
				return nil
			}
			cur = l[e]
		}
	}
	return nil
}
