package policies

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// encodeInput returns the value OPA evaluates for in and in's digest.
//
// The value is lazy: a top-level field (the StatefulSet, the PVC, ...) is
// converted to AST only when a policy first reads it. Claim policies read
// input.change and little else, and converting the whole input cost as much
// as evaluating the shipped policies. The lazy object is OPA's own (the one
// it uses for documents read from its store); it is not safe for concurrent
// use, which is fine for one evaluation's input.
//
// The fields read on (nearly) every evaluation (eagerInputFields) are
// encoded to JSON and decoded by decodeJSON at once. The others are left as
// Go values, which OPA converts with its own JSON round trip if a policy
// reads them: the StatefulSet and the template are the bulk of the input,
// and encoding them to JSON that only the digest read was a tenth of a
// verdict's CPU.
//
// The digest is SHA-256 over each field's name and encoding (hashField):
// the JSON of the decoded fields, and of the others their protobuf if they
// are Kubernetes objects, about four times cheaper (hashValue).
//
// params, when not nil, is in.Params encoded by encodeParams: the
// parameters are the same for every input of a revision, so their JSON and
// value are made once rather than per evaluation.
func encodeInput(in Input, params *encodedParams) (ast.Value, string, error) {
	if inputFields == nil {
		return encodeInputWhole(in)
	}
	v := reflect.ValueOf(in)
	e := inputEncoders.Get().(*inputEncoder)
	defer inputEncoders.Put(e)
	e.h.Reset()
	native := make(map[string]any, len(inputFields))
	d := newJSONDecoder()
	defer d.release()
	for _, f := range inputFields {
		x := v.Field(f.index).Interface()
		switch {
		case f.name == paramsField && params != nil:
			native[f.name] = params.value
			e.hashJSON(f.name, params.json)
		case f.eager:
			b, err := e.encodeJSON(x)
			if err != nil {
				return nil, "", err
			}
			e.hashJSON(f.name, b)
			native[f.name] = fieldValue(d, b)
		default:
			native[f.name] = x
			if rv := v.Field(f.index); rv.Kind() == reflect.Pointer && rv.IsNil() {
				native[f.name] = nil // OPA's conversion fails on a typed nil
			}
			if err := e.hashValue(f.name, x); err != nil {
				return nil, "", err
			}
		}
	}
	return ast.LazyObject(native), hex.EncodeToString(e.h.Sum(e.sum[:0])), nil
}

// inputEncoder is the scratch space of one encodeInput, pooled: nothing
// the evaluation keeps points into it (decodeJSON copies the document).
type inputEncoder struct {
	buf   bytes.Buffer
	json  *json.Encoder // writes to buf
	proto []byte
	head  []byte // a field's name and lengths, for the digest
	h     hash.Hash
	sum   [sha256.Size]byte
}

var inputEncoders = sync.Pool{New: func() any {
	e := &inputEncoder{h: sha256.New()}
	e.json = json.NewEncoder(&e.buf)
	return e
}}

// encodeJSON returns x as json.Marshal writes it, valid until the next call.
func (e *inputEncoder) encodeJSON(x any) ([]byte, error) {
	e.buf.Reset()
	if err := e.json.Encode(x); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")), nil // an Encoder adds a newline
}

// protoMessage is a Kubernetes API object's generated protobuf encoding.
type protoMessage interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
	GetObjectKind() schema.ObjectKind
}

// hashValue hashes a field left as a Go value: a Kubernetes object as
// protobuf, about four times cheaper than its JSON, anything else as JSON.
func (e *inputEncoder) hashValue(name string, x any) error {
	if m, ok := x.(protoMessage); ok && !reflect.ValueOf(x).IsNil() {
		size := m.Size()
		e.proto = slices.Grow(e.proto[:0], size)[:size]
		n, err := m.MarshalToSizedBuffer(e.proto)
		if err != nil {
			return err
		}
		apiVersion, kind := m.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
		e.hashField(name, 'p', apiVersion, kind, e.proto[size-n:])
		return nil
	}
	b, err := e.encodeJSON(x)
	if err != nil {
		return err
	}
	e.hashJSON(name, b)
	return nil
}

func (e *inputEncoder) hashJSON(name string, b []byte) { e.hashField(name, 'j', "", "", b) }

// hashField writes one field to the digest: its name, its encoding (j:
// JSON; p: protobuf, after the apiVersion and kind that protobuf leaves
// out, since policies see them) and its body, each prefixed by its length
// so that no two inputs write the same bytes.
func (e *inputEncoder) hashField(name string, encoding byte, apiVersion, kind string, body []byte) {
	h := append(appendPart(e.head[:0], name), encoding)
	if encoding == 'p' {
		h = appendPart(appendPart(h, apiVersion), kind)
	}
	e.head = binary.LittleEndian.AppendUint64(h, uint64(len(body)))
	e.h.Write(e.head)
	e.h.Write(body)
}

func appendPart(b []byte, s string) []byte {
	return append(binary.LittleEndian.AppendUint64(b, uint64(len(s))), s...)
}

// paramsField is the JSON name of Input.Params.
const paramsField = "params"

// encodedParams is Input.Params as encodeInput hashes and evaluates it.
// The value is converted to AST in full: it is small, and an AST value
// (unlike a lazy object, which caches what it converts) can be shared by
// concurrent evaluations.
type encodedParams struct {
	json  []byte
	value ast.Value
}

// encodeParams encodes params once for every input of a revision; nil when
// the fast path would not use it, and each input then encodes its own.
func encodeParams(params map[string]any) *encodedParams {
	if inputFields == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(params); err != nil {
		return nil
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	v, err := ast.ValueFromReader(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	return &encodedParams{json: b, value: v}
}

// encodeInputWhole is the general path: marshal, then split the top level.
// Its digest is SHA-256 of the JSON.
func encodeInputWhole(in Input) (ast.Value, string, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, "", err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, "", err
	}
	native := make(map[string]any, len(top))
	d := newJSONDecoder()
	defer d.release()
	for k, v := range top {
		if eagerInputFields[k] {
			native[k] = fieldValue(d, v)
		} else {
			native[k] = v
		}
	}
	sum := sha256.Sum256(raw)
	return ast.LazyObject(native), hex.EncodeToString(sum[:]), nil
}

// fieldValue is what the lazy input holds for a field read on (nearly)
// every evaluation: b decoded by decodeJSON, at a fraction of the cost of
// OPA's conversion (ast.InterfaceToValue's fallback: marshal, decode,
// convert); OPA then converts only the parts a policy reads (a decoded
// object stays lazy). What decodeJSON refuses is left to OPA, as a copy: b
// may be scratch space.
func fieldValue(d *jsonDecoder, b []byte) any {
	if v, err := d.decode(b); err == nil {
		return v
	}
	return json.RawMessage(bytes.Clone(b))
}

// eagerInputFields are the fields decoded up front: the change, which
// every policy reads, the live PVC and its StorageClass, which the shipped
// policies read for every claim change, the namespace's quotas (reduced,
// small, read by quota-fits for every growth) with the proposal's totals,
// and the parameters, small, which
// OPA's rule index looks up (input.params is the fallback of
// data.claimwarden.params). The StatefulSet and the template, the bulk of
// the input, are converted only if a policy reads them.
var eagerInputFields = map[string]bool{"change": true, "pvc": true, "storageClass": true, "resourceQuotas": true, "proposal": true, "params": true}

// inputField is a top-level field of Input as encoding/json names it.
type inputField struct {
	index int
	name  string
	eager bool // eagerInputFields[name]
}

// inputFields lists Input's fields in declaration order as encoding/json
// encodes them; nil when a field uses an encoding this fast path does not
// reproduce (omitempty, embedding, ...), and encodeInputWhole is used.
var inputFields = func() []inputField {
	t := reflect.TypeFor[Input]()
	var out []inputField
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() && !f.Anonymous:
			continue
		case name == "-" && opts == "":
			continue
		case f.Anonymous || opts != "":
			return nil
		case name == "":
			name = f.Name
		}
		out = append(out, inputField{index: i, name: name, eager: eagerInputFields[name]})
	}
	return out
}()
