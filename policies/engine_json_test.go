package policies

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/open-policy-agent/opa/v1/util"
)

// decodeJSON must decode exactly as OPA's own decoding (encoding/json with
// UseNumber) does, or policies would see another input than the digest's.
func TestDecodeJSONIsOPAsDecoding(t *testing.T) {
	in := engInput(3, 10, 20)
	in.Params = map[string]any{"disabled": []any{"max-step"}, "x": nil, "y": 1.5}
	in.Change.Labels = map[string]string{"a<b>&c": "\u2028\u2029", "é": "\"quoted\" \\ \t\n/", "bad": "\xff\xfe"}
	in.Change.Immutable = []Mismatch{{Field: "spec.volumeMode", Live: "Filesystem", Desired: "Block"}}
	whole, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{
		string(whole),
		`null`, `true`, `false`, `0`, `-0`, `12`, `-12.5e-3`, `1E+400`, `123456789012345678901234567890`,
		`""`, `"\u00e9\ud83d\ude00\n\"\\\/"`, `"é😀"`, `[]`, `{}`, `[[],{},[{}]]`,
		` { "a" : [ 1 , "b" , null , true ] , "b" : { } } `,
		`{"a":{"b":{"c":[1,{"d":"e"}]}}}`,
	}
	for _, f := range inputFields {
		b, err := json.Marshal(reflect.ValueOf(in).Field(f.index).Interface())
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for _, doc := range docs {
		got, err := decodeJSON([]byte(doc))
		if err != nil {
			t.Errorf("decodeJSON(%s): %v", doc, err)
			continue
		}
		var want any
		if err := util.NewJSONDecoder(bytes.NewReader([]byte(doc))).Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decodeJSON(%s) = %#v, want %#v", doc, got, want)
		}
	}
}

// What decodeJSON does not expect is an error (the field is then left to
// OPA), never a different value.
func TestDecodeJSONRejectsWhatItDoesNotExpect(t *testing.T) {
	for _, doc := range []string{
		``, ` `, `{`, `[`, `"`, `"a`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":1 "b":2}`, `{1:2}`,
		`tru`, `nul`, `-`, `01`, `1.`, `.5`, `1e`, `1e+`, `+1`, `NaN`, `"a` + "\x01" + `"`, `"` + "\xff" + `"`,
		`{"a":1,"a":2}`, `1 2`, `{}x`, `"\x"`,
	} {
		if v, err := decodeJSON([]byte(doc)); err == nil {
			t.Errorf("decodeJSON(%q) = %#v, want an error", doc, v)
		}
	}
}
