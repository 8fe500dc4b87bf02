package policies

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/util"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// FuzzDecodeJSON: what decodeJSON decodes, OPA's own decoding (encoding/json
// with UseNumber) decodes to the same value; what it refuses is left to
// OPA, so refusing is safe, differing is not.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`null`, `true`, `-0`, `-12.5e-3`, `1E+400`, `123456789012345678901234567890`, `"\u00e9\ud83d\ude00\n\"\\\/"`,
		`"\ud800"`, `"\udc00\ud800x"`, "\"\xff\xfe\"", "\"\u2028\"", `[[],{},[{}]]`, ` { "a" : [ 1 , "b" , null , true ] , "b" : { } } `,
		`{"a":1,"a":2}`, `{"a":1,}`, `01`, `1.`, `"\x"`, `[` + string(bytes.Repeat([]byte("["), 300)),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, err := decodeJSON(doc)
		if err != nil {
			return
		}
		var want any
		dec := util.NewJSONDecoder(bytes.NewReader(doc))
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("decodeJSON(%q) = %#v, but OPA refuses it: %v", doc, got, err)
		}
		if dec.More() {
			t.Fatalf("decodeJSON(%q) = %#v, but OPA reads more than one value", doc, got)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeJSON(%q) = %#v, OPA %#v", doc, got, want)
		}
	})
}

// FuzzEncodeInput: the value OPA evaluates for a fuzzed Input (lazy, partly
// decoded by decodeJSON, partly Go values) is the value OPA reads from
// json.Marshal's encoding itself, and the general path's; its digest is the
// same every time and with the parameters encoded once.
func FuzzEncodeInput(f *testing.F) {
	f.Add("shop", "data-db-0", "a<b>&c", "\u2028\u2029", "\xff\xfe", int32(3), "10Gi", int64(10<<30), []byte(`{"disabled":["max-step"],"x":null,"y":1.5}`))
	f.Add("", "", "", "", "", int32(-1), "1E+400", int64(-1), []byte(`[1e400, "\ud800", {"": {}}]`))
	f.Add("ns", "c", "é", "\"quoted\" \\ \t\n/", "\x00", int32(0), "0.1m", int64(1), []byte(`null`))
	f.Fuzz(func(t *testing.T, ns, claim, key, value, odd string, ordinal int32, size string, sizeBytes int64, params []byte) {
		in := engInput(ordinal, 1, 2)
		in.Change.Namespace, in.Change.Claim = ns, claim
		in.Change.Labels = map[string]string{key: value, odd: key}
		in.Change.Annotations = map[string]string{value: odd}
		in.Change.Immutable = []Mismatch{{Field: key, Live: value, Desired: odd}}
		in.Change.Storage.To, in.Change.Storage.ToBytes = size, sizeBytes
		in.Change.Restart, in.Change.Pod = ordinal%2 == 0, odd
		// The omitempty fields, both empty and set.
		in.Change.Storage.Recovery = ordinal%2 == 0
		in.Change.Storage.Capacity, in.Change.Storage.CapacityBytes = odd, sizeBytes/2
		in.Source = Source{Kind: key, Name: claim, Repository: odd, Revision: value}
		in.PVC.Labels = map[string]string{odd: value}
		if q, err := resource.ParseQuantity(size); err == nil && len(size) < 32 {
			in.PVC.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: q}
		}
		in.Params = nil
		var p any
		if err := util.NewJSONDecoder(bytes.NewReader(params)).Decode(&p); err == nil {
			if m, ok := p.(map[string]any); ok {
				in.Params = m
			} else {
				in.Params = map[string]any{"value": p}
			}
		}
		std, err := json.Marshal(in)
		if err != nil {
			return // neither path encodes it: the evaluation fails, it does not change
		}
		lazy, digest, err := encodeInput(in, nil)
		if err != nil {
			t.Fatalf("encodeInput: %v, json.Marshal succeeds", err)
		}
		want, err := ast.ValueFromReader(bytes.NewReader(std))
		if err != nil {
			t.Fatalf("OPA cannot read json.Marshal's input: %v", err)
		}
		if lazy.Compare(want) != 0 {
			t.Fatalf("the evaluated input differs from OPA's reading of\n%s", std)
		}
		if again, againDigest, err := encodeInput(in, nil); err != nil || againDigest != digest || again.Compare(want) != 0 {
			t.Fatalf("a second encoding differs: digest %s, want %s (%v)", againDigest, digest, err)
		}
		if cached, cachedDigest, err := encodeInput(in, encodeParams(in.Params)); err != nil || cachedDigest != digest || cached.Compare(want) != 0 {
			t.Fatalf("with the params encoded once the input differs: digest %s, want %s (%v)", cachedDigest, digest, err)
		}
		whole, _, err := encodeInputWhole(in)
		if err != nil || whole.Compare(want) != 0 {
			t.Fatalf("the general path differs: %v", err)
		}
	})
}
