package manifests

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Defaults of Limits.
const (
	DefaultMaxBytes     = 32 << 20
	DefaultMaxDocuments = 50_000
	DefaultMaxKeys      = 50_000
	DefaultMaxNodes     = 2_000_000
	// DefaultMaxDocumentBytes is far above the largest object the API
	// server stores (etcd's default request limit is 1.5 MiB), leaving room
	// for Lists (kubectl get -o yaml).
	DefaultMaxDocumentBytes = 8 << 20
)

// maxListDepth bounds Lists inside Lists: kubectl flattens any depth, but
// no tool writes more than a few.
const maxListDepth = 8

// Limits bound the work of reading manifests, which come from people the
// guardrails guard against (a pull request, a watched repository): past a
// limit, reading stops with an error naming the input, the limit and its
// value. A zero field takes its default.
type Limits struct {
	// Bytes bounds the input of one Read or Decode, every file and stdin
	// together, and each document with its YAML aliases expanded; default
	// DefaultMaxBytes.
	Bytes int64
	// DocumentBytes bounds one YAML document or JSON value, a List with its
	// items; default DefaultMaxDocumentBytes. Decoding one document costs
	// the most per byte (a mapping of millions of keys: some 40 bytes of
	// memory per byte of YAML), and it cannot stop half-way.
	DocumentBytes int64
	// Documents bounds the YAML documents (empty ones too), JSON values and
	// List items; default DefaultMaxDocuments.
	Documents int
	// Keys bounds the keys of one mapping; default DefaultMaxKeys.
	Keys int
	// Nodes bounds the values of the input (every key, scalar and item, YAML
	// aliases expanded); default DefaultMaxNodes.
	Nodes int
}

func (l Limits) withDefaults() Limits {
	if l.Bytes <= 0 {
		l.Bytes = DefaultMaxBytes
	}
	if l.DocumentBytes <= 0 {
		l.DocumentBytes = DefaultMaxDocumentBytes
	}
	if l.Documents <= 0 {
		l.Documents = DefaultMaxDocuments
	}
	if l.Keys <= 0 {
		l.Keys = DefaultMaxKeys
	}
	if l.Nodes <= 0 {
		l.Nodes = DefaultMaxNodes
	}
	return l
}

// budget is what is left of the limits while one Read or Decode runs.
// Documents are decoded in parallel, so the counts they charge are atomic.
type budget struct {
	Limits
	bytes            int64
	documents, nodes atomic.Int64
}

func newBudget(l Limits) *budget {
	b := &budget{Limits: l.withDefaults()}
	b.bytes = b.Bytes
	b.documents.Store(int64(b.Documents))
	b.nodes.Store(int64(b.Nodes))
	return b
}

// read reads r whole, file naming it, within what is left of the byte limit.
func (b *budget) read(r io.Reader, file string) ([]byte, error) {
	// One byte more than is left tells a stream at the limit from a longer one.
	data, err := io.ReadAll(io.LimitReader(r, min(b.bytes, math.MaxInt64-1)+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if int64(len(data)) > b.bytes {
		return nil, fmt.Errorf("reading %s: the input is larger than the limit of %s bytes in all (%d)", file, binary(b.Bytes), b.Bytes)
	}
	b.bytes -= int64(len(data))
	return data, nil
}

// documentSize refuses a document of size bytes at loc beyond the limit.
func (b *budget) documentSize(loc Location, size int) error {
	if int64(size) > b.DocumentBytes {
		return fmt.Errorf("%s: the document is larger than the limit of %s bytes for one document (%d)", loc, binary(b.DocumentBytes), b.DocumentBytes)
	}
	return nil
}

// document counts one more document (or List item) at loc.
func (b *budget) document(loc Location) error {
	if b.documents.Add(-1) < 0 {
		return fmt.Errorf("%s: more than %d documents in all (the limit)", loc, b.Documents)
	}
	return nil
}

// spend counts the nodes of one object at loc.
func (b *budget) spend(loc Location, nodes int) error {
	if b.nodes.Add(-int64(nodes)) < 0 {
		return fmt.Errorf("%s: more than %d values (keys, scalars, items) in all (the limit)", loc, b.Nodes)
	}
	return nil
}

// binary renders a byte count as a quantity: "32Mi".
func binary(n int64) string {
	return resource.NewQuantity(n, resource.BinarySI).String()
}

// Read is Read within these limits.
func (l Limits) Read(paths []string, stdin io.Reader) ([]Object, error) {
	var out []Object
	if err := read(paths, stdin, newBudget(l), collect(&out)); err != nil {
		return nil, err
	}
	return out, nil
}

// Decode is Decode within these limits.
func (l Limits) Decode(r io.Reader, file string) ([]Object, error) {
	var out []Object
	if err := decode(r, file, newBudget(l), collect(&out)); err != nil {
		return nil, err
	}
	return out, nil
}

// countValues counts the values of v, a decoded object (keys, scalars,
// items), refusing a mapping of more than maxKeys keys, named by its field.
func countValues(o Object, v any, maxKeys int) (int, error) {
	var path []any
	var walk func(v any) (int, error)
	walk = func(v any) (int, error) {
		n := 1
		switch x := v.(type) {
		case map[string]any:
			if len(x) > maxKeys {
				return 0, o.fieldError(path, fieldName(path), "%d keys, more than the limit of %d", len(x), maxKeys)
			}
			for k, e := range x {
				path = append(path, k)
				c, err := walk(e)
				path = path[:len(path)-1]
				if err != nil {
					return 0, err
				}
				n += 1 + c
			}
		case []any:
			for i, e := range x {
				path = append(path, i)
				c, err := walk(e)
				path = path[:len(path)-1]
				if err != nil {
					return 0, err
				}
				n += c
			}
		}
		return n, nil
	}
	return walk(v)
}

// fieldName renders a path of keys and indices: "spec.items[2].metadata".
func fieldName(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch x := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", x)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, x)
		}
	}
	if b.Len() == 0 {
		return "the object"
	}
	return b.String()
}
