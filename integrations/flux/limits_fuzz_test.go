package flux

import (
	"bytes"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// fuzzBuildLimits are small, so that the fuzzer reaches every limit.
var fuzzBuildLimits = Limits{FileBytes: 8 << 10, TotalBytes: 32 << 10, Documents: 8, Nodes: 400, Aliases: 16, Objects: 8, OutputBytes: 64 << 10}

// FuzzBudgetSpend is the pure entry point of a Flux build's input: each
// file kustomize would parse is charged before it parses it. What the
// budget lets through, kustomize's YAML parser reads within the limits (no
// more documents, no more nodes, aliases expanded); what it refuses is
// named by file.
func FuzzBudgetSpend(f *testing.F) {
	for _, s := range []string{
		"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- sts.yaml\n",
		"a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\nd: [*c, *c, *c]\n",
		"--- a\n--- b\n...\n---\n", "{a: [1, 2, {b: c}]}", "k: |\n  - not\n  - nodes\n", "*unknown", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := newBudget(fuzzBuildLimits)
		if err := b.spend("kustomization.yaml", data); err != nil {
			if !strings.HasPrefix(err.Error(), "kustomization.yaml: ") {
				t.Fatalf("the refusal does not name the file: %v", err)
			}
			return
		}
		docs, nodes := 0, 0
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if dec.Decode(&doc) != nil {
				break
			}
			docs++
			nodes += countExpanded(&doc, 0)
		}
		if docs > fuzzBuildLimits.Documents || nodes > fuzzBuildLimits.Nodes {
			t.Fatalf("let through %d documents of %d nodes (aliases expanded), over the limits %d, %d", docs, nodes, fuzzBuildLimits.Documents, fuzzBuildLimits.Nodes)
		}
	})
}

// countExpanded counts the nodes of n with its aliases expanded, stopping
// past the fuzz limit (an alias bomb the budget let through is over it).
func countExpanded(n *yaml.Node, depth int) int {
	if depth > 100 {
		return fuzzBuildLimits.Nodes + 1
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return countExpanded(n.Alias, depth+1)
	}
	c := 1
	for _, e := range n.Content {
		c += countExpanded(e, depth+1)
		if c > fuzzBuildLimits.Nodes {
			break
		}
	}
	return c
}
