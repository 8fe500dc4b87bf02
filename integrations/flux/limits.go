package flux

import (
	"bytes"
	"fmt"
	"math"

	"go.yaml.in/yaml/v3"

	"github.com/claimwarden/claimwarden/integrations/manifests"
)

// Limits bound what a build reads and produces. kustomize parses every YAML
// file it reads into a node tree (kyaml) and copies it several times over,
// expanding aliases, so bytes alone do not bound its memory: a dense file
// makes a node of every byte or two, and an alias repeats what it names.
// The node bound is what keeps it, and the scan itself, within a few
// hundred MiB. Zero fields take DefaultLimits' values.
type Limits struct {
	// FileBytes bounds each file read.
	FileBytes int64
	// TotalBytes bounds all the files a build reads, each time it reads
	// one, aliases expanded.
	TotalBytes int64
	// Documents bounds the YAML documents of all the files read.
	Documents int
	// Nodes bounds the YAML nodes of all the files read, aliases expanded
	// (counted from the tokens, so at most twice too many).
	Nodes int
	// Aliases bounds the aliases (*name) of all the files read.
	Aliases int
	// Objects and OutputBytes bound the build's output (its JSON).
	Objects     int
	OutputBytes int64
}

// DefaultLimits fit the shipped Deployment's 512Mi with the rest of the
// controller; a repository of several MiB of manifests builds within them.
var DefaultLimits = Limits{
	FileBytes:   4 << 20,
	TotalBytes:  8 << 20,
	Documents:   10000,
	Nodes:       600000,
	Aliases:     1000,
	Objects:     10000,
	OutputBytes: 64 << 20,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.FileBytes > 0 {
		d.FileBytes = l.FileBytes
	}
	if l.TotalBytes > 0 {
		d.TotalBytes = l.TotalBytes
	}
	if l.Documents > 0 {
		d.Documents = l.Documents
	}
	if l.Nodes > 0 {
		d.Nodes = l.Nodes
	}
	if l.Aliases > 0 {
		d.Aliases = l.Aliases
	}
	if l.Objects > 0 {
		d.Objects = l.Objects
	}
	if l.OutputBytes > 0 {
		d.OutputBytes = l.OutputBytes
	}
	return d
}

// budget is what is left of Limits for the input of one build.
type budget struct {
	limits                    Limits
	bytes                     int64
	documents, nodes, aliases int
}

func newBudget(l Limits) *budget { return &budget{limits: l.withDefaults()} }

// overLimit says which limit a file took the build past.
func overLimit(file, what string, limit int64) error {
	return fmt.Errorf("%s: the build reads more than %d %s, its limit", file, limit, what)
}

// spend charges one file's content to the budget, or says which limit it
// breaks. It reads data as kustomize's YAML parser would, without building
// anything of a size the limits have not yet allowed: first a count of the
// tokens (every node starts with one, or follows an indicator that is one),
// then, only for a file that may hold aliases, the node tree, whose size is
// now known to be bounded, to weigh what its aliases expand to.
func (b *budget) spend(file string, data []byte) error {
	l := b.limits
	if int64(len(data)) > l.FileBytes {
		return fmt.Errorf("%s: %d bytes, over the limit of %d bytes per file", file, len(data), l.FileBytes)
	}
	s := scanTokens(data)
	if b.documents += s.documents; b.documents > l.Documents {
		return overLimit(file, "YAML documents", int64(l.Documents))
	}
	if b.nodes += 2 * s.tokens; b.nodes > l.Nodes {
		return overLimit(file, "YAML nodes", int64(l.Nodes))
	}
	b.bytes += int64(len(data))
	if s.stars > 0 {
		extra, err := aliasExpansion(data, l)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if b.aliases += extra.aliases; b.aliases > l.Aliases {
			return overLimit(file, "YAML aliases", int64(l.Aliases))
		}
		b.nodes = int(saturatedAdd(int64(b.nodes), extra.nodes))
		b.bytes = saturatedAdd(b.bytes, extra.bytes)
		if b.nodes > l.Nodes {
			return overLimit(file, "YAML nodes (aliases expanded)", int64(l.Nodes))
		}
	}
	if b.bytes > l.TotalBytes {
		return overLimit(file, "bytes of files (aliases expanded)", l.TotalBytes)
	}
	return nil
}

type tokenCounts struct{ tokens, documents, stars int }

// scanTokens over-counts the tokens of YAML (or JSON) text: every run of
// non-blank characters between indicators is taken for a scalar and every
// indicator for a node of its own, inside quotes, comments and block
// scalars too, so that no text a parser might read as structure goes
// uncounted. Documents are counted from the markers that can start one;
// stars are words that may be aliases.
func scanTokens(data []byte) tokenCounts {
	c := tokenCounts{documents: 1}
	inWord := false
	lineStart := true
	for i, ch := range data {
		if lineStart && (bytes.HasPrefix(data[i:], []byte("---")) || bytes.HasPrefix(data[i:], []byte("..."))) {
			c.documents++
		}
		lineStart = ch == '\n'
		switch ch {
		case ' ', '\t', '\r', '\n':
			inWord = false
		case ',', '[', ']', '{', '}', ':', '-', '?', '|', '>':
			c.tokens++
			inWord = false
		default:
			if !inWord {
				c.tokens++
				inWord = true
				if ch == '*' {
					c.stars++
				}
			}
		}
	}
	return c
}

type expansion struct {
	aliases int
	nodes   int64 // nodes the aliases add
	bytes   int64 // scalar bytes the aliases add
	sizer   manifests.AliasSizer
}

// aliasExpansion parses data (whose token count the budget has allowed) as
// kustomize's parser does and weighs what its aliases add once expanded,
// each anchored node weighed once (manifests.AliasSizer, as check's input
// limits do).
func aliasExpansion(data []byte, l Limits) (expansion, error) {
	var e expansion
	var count func(n *yaml.Node, depth int) error
	count = func(n *yaml.Node, depth int) error {
		if depth > 10000 || e.nodes > int64(l.Nodes) {
			return nil
		}
		if n.Kind == yaml.AliasNode {
			e.aliases++
			if n.Alias != nil {
				nodes, bytes, err := e.sizer.Size(n.Alias)
				if err != nil {
					return err
				}
				e.nodes, e.bytes = saturatedAdd(e.nodes, nodes), saturatedAdd(e.bytes, bytes)
			}
			return nil
		}
		for _, c := range n.Content {
			if err := count(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return e, nil // the end, or YAML kustomize cannot parse either
		}
		e.sizer = manifests.AliasSizer{} // one tree per document
		if err := count(&doc, 0); err != nil {
			return e, err
		}
		if e.nodes > int64(l.Nodes) {
			return e, nil
		}
	}
}

// saturatedAdd is a+b, or math.MaxInt64 where that overflows: nested
// aliases multiply sizes beyond any integer.
func saturatedAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
