package policies

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// encodeInput returns the input's JSON (exactly json.Marshal(in): the
// digest is defined on it) and the value OPA evaluates.
//
// The value is lazy: a top-level field (the StatefulSet, the PVC, ...) is
// decoded and converted to AST only when a policy first reads it. Claim
// policies read input.change and little else, and converting the whole
// input cost as much as evaluating the shipped policies. The lazy object is
// OPA's own (the one it uses for documents read from its store); it is not
// safe for concurrent use, which is fine for one evaluation's input.
//
// Each top-level field is encoded on its own, so that the pieces OPA may
// need are at hand without splitting the document again; the pieces joined
// are byte for byte what json.Marshal(in) writes, as encoding/json writes a
// struct's fields in order as "name":value without spaces (and an Encoder
// writes what Marshal returns, plus a newline).
//
// params, when not nil, is in.Params encoded by encodeParams: the
// parameters are the same for every input of a revision, so their JSON and
// value are made once rather than per evaluation.
func encodeInput(in Input, params *encodedParams) ([]byte, ast.Value, error) {
	if inputFields == nil {
		return encodeInputWhole(in)
	}
	v := reflect.ValueOf(in)
	var buf bytes.Buffer
	buf.Grow(4096)
	enc := json.NewEncoder(&buf)
	spans := make([][2]int, len(inputFields))
	buf.WriteByte('{')
	for i, f := range inputFields {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(f.quoted)
		buf.WriteByte(':')
		start := buf.Len()
		if f.name == paramsField && params != nil {
			buf.Write(params.json)
		} else {
			if err := enc.Encode(v.Field(f.index).Interface()); err != nil {
				return nil, nil, err
			}
			buf.Truncate(buf.Len() - 1) // the newline
		}
		spans[i] = [2]int{start, buf.Len()}
	}
	buf.WriteByte('}')
	raw := buf.Bytes()
	native := make(map[string]any, len(inputFields))
	d := newJSONDecoder()
	defer d.release()
	for i, f := range inputFields {
		if f.name == paramsField && params != nil {
			native[f.name] = params.value
			continue
		}
		native[f.name] = fieldValue(d, f.eager, raw[spans[i][0]:spans[i][1]:spans[i][1]])
	}
	return raw, ast.LazyObject(native), nil
}

// paramsField is the JSON name of Input.Params.
const paramsField = "params"

// encodedParams is Input.Params as encodeInput writes and evaluates it.
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
func encodeInputWhole(in Input) ([]byte, ast.Value, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, nil, err
	}
	native := make(map[string]any, len(top))
	d := newJSONDecoder()
	defer d.release()
	for k, v := range top {
		native[k] = fieldValue(d, eagerInputFields[k], v)
	}
	return raw, ast.LazyObject(native), nil
}

// fieldValue is what the lazy input holds for a top-level field. By
// default its JSON: OPA converts a json.RawMessage when a policy first reads
// the field, with a JSON round trip (ast.InterfaceToValue's fallback:
// marshal, decode, convert). The fields read on (nearly) every evaluation
// are decoded now instead, by decodeJSON, at a fraction of that cost; OPA
// then converts only the parts a policy reads (a decoded object stays lazy).
func fieldValue(d *jsonDecoder, eager bool, b []byte) any {
	if eager {
		if v, err := d.decode(b); err == nil {
			return v
		}
	}
	return json.RawMessage(b)
}

// eagerInputFields are the fields decoded up front: the change, which
// every policy reads, the live PVC and its StorageClass, which the shipped
// policies read for every claim change, the namespace's quotas (reduced,
// small, read by quota-fits for every growth), and the parameters, small, which
// OPA's rule index looks up (input.params is the fallback of
// data.claimwarden.params). The StatefulSet and the template, the bulk of
// the input, are converted only if a policy reads them.
var eagerInputFields = map[string]bool{"change": true, "pvc": true, "storageClass": true, "resourceQuotas": true, "params": true}

// inputField is a top-level field of Input as encoding/json names it.
type inputField struct {
	index  int
	name   string
	quoted string // the JSON key, "name"
	eager  bool   // eagerInputFields[name]
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
		q, err := json.Marshal(name)
		if err != nil {
			return nil
		}
		out = append(out, inputField{index: i, name: name, quoted: string(q), eager: eagerInputFields[name]})
	}
	return out
}()
