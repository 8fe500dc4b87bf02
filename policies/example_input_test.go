package policies_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/claimwarden/claimwarden/policies"
)

// The examples in docs/policy-input.md are what policy authors copy; these
// tests keep them true: the inputs are what the Go types produce, the results
// are what the shipped policies answer, the custom policy passes its tests.

const policyDoc = "../docs/policy-input.md"

// docExamples returns the fenced blocks of the policy doc that follow an
// `<!-- example: NAME -->` marker, by NAME.
func docExamples(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(policyDoc)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- example: (\\S+) -->\n```[a-z]*\n(.*?)```")
	out := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
		if _, dup := out[m[1]]; dup {
			t.Fatalf("%s: example %q appears twice", policyDoc, m[1])
		}
		out[m[1]] = m[2]
	}
	return out
}

func docExample(t *testing.T, examples map[string]string, name string) string {
	t.Helper()
	src, ok := examples[name]
	if !ok {
		t.Fatalf("%s: no example %q (marker <!-- example: %s --> before a fenced block)", policyDoc, name, name)
	}
	return src
}

func decodeJSON(t *testing.T, name, src string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(src), &v); err != nil {
		t.Fatalf("example %s is not JSON: %v", name, err)
	}
	return v
}

// TestDocInputsAreWhatInputEncodes decodes each documented input into Input,
// rejecting unknown fields, and encodes it again: a field the doc shows that
// Go would drop, rename or never send fails here.
func TestDocInputsAreWhatInputEncodes(t *testing.T) {
	examples := docExamples(t)
	for _, tc := range []struct{ name, kind string }{
		{"claim-input", policies.KindClaim},
		{"statefulset-input", policies.KindStatefulSet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := docExample(t, examples, tc.name)
			dec := json.NewDecoder(strings.NewReader(src))
			dec.DisallowUnknownFields()
			var in policies.Input
			if err := dec.Decode(&in); err != nil {
				t.Fatalf("does not decode into policies.Input: %v", err)
			}
			if in.Change.Kind != tc.kind {
				t.Errorf("change.kind = %q, want %q", in.Change.Kind, tc.kind)
			}
			again, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			if want, got := decodeJSON(t, tc.name, src), decodeJSON(t, "re-encoded", string(again)); !reflect.DeepEqual(got, want) {
				var pretty bytes.Buffer
				_ = json.Indent(&pretty, again, "", "  ")
				t.Errorf("the doc's JSON differs from what Input encodes; Input encodes:\n%s", pretty.String())
			}
		})
	}
}

// shippedRegoModules are the shipped policies without their tests.
func shippedRegoModules(t *testing.T) map[string]*ast.Module {
	t.Helper()
	out := map[string]*ast.Module{}
	for path, m := range loadShipped(t) {
		if !isTestFile(path) {
			out[path] = m
		}
	}
	return out
}

// evalShipped answers the way the engine does: deny and warn of the shipped
// policies, parameters in data.claimwarden.params, builtin errors raised.
func evalShipped(t *testing.T, modules map[string]*ast.Module, input any, query string) any {
	t.Helper()
	params := map[string]any{}
	if obj, ok := input.(map[string]any); ok {
		if p, ok := obj["params"].(map[string]any); ok {
			params = p
		}
	}
	opts := []func(*rego.Rego){
		rego.Query(query),
		rego.Store(inmem.NewFromObject(map[string]any{"claimwarden": map[string]any{"params": params}})),
		rego.Input(input),
		rego.StrictBuiltinErrors(true),
	}
	for _, m := range modules {
		opts = append(opts, rego.ParsedModule(m))
	}
	rs, err := rego.New(opts...).Eval(context.Background())
	if err != nil {
		t.Fatalf("evaluating %s: %v", query, err)
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		t.Fatalf("evaluating %s: %d results", query, len(rs))
	}
	// Through JSON, so that numbers (json.Number from OPA) compare equal to
	// the float64s of the doc's decoded JSON.
	b, err := json.Marshal(rs[0].Expressions[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, query, string(b))
}

// TestDocResultsAreWhatShippedPoliciesAnswer evaluates each documented input
// and compares deny and warn with the result the doc shows next to it.
func TestDocResultsAreWhatShippedPoliciesAnswer(t *testing.T) {
	examples := docExamples(t)
	modules := shippedRegoModules(t)
	for _, name := range []string{"claim", "statefulset"} {
		t.Run(name, func(t *testing.T) {
			input := decodeJSON(t, name+"-input", docExample(t, examples, name+"-input"))
			want := decodeJSON(t, name+"-result", docExample(t, examples, name+"-result"))
			got := evalShipped(t, modules, input, `{"deny": data.claimwarden.claims.deny, "warn": data.claimwarden.claims.warn}`)
			if !reflect.DeepEqual(normaliseResult(got), normaliseResult(want)) {
				b, _ := json.MarshalIndent(got, "", "  ")
				t.Errorf("the shipped policies answer:\n%s\nthe doc says:\n%s", b, docExample(t, examples, name+"-result"))
			}
		})
	}
}

// normaliseResult sorts deny and warn (sets, which the doc writes as arrays)
// by their JSON text, so that order does not matter.
func normaliseResult(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, x := range obj {
		xs, ok := x.([]any)
		if !ok {
			out[k] = x
			continue
		}
		texts := make([]string, 0, len(xs))
		for _, e := range xs {
			b, _ := json.Marshal(e)
			texts = append(texts, string(b))
		}
		slices.Sort(texts)
		out[k] = texts
	}
	return out
}

// TestDocDefaultParams keeps the documented defaults equal to lib.rego's.
func TestDocDefaultParams(t *testing.T) {
	want := decodeJSON(t, "default-params", docExample(t, docExamples(t), "default-params"))
	got := evalShipped(t, shippedRegoModules(t), map[string]any{}, "data.claimwarden.claims.default_params")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lib.rego's default_params = %v, the doc says %v", got, want)
	}
}

// TestDocCustomPolicyPassesItsTests compiles the doc's custom policy with the
// shipped ones (it uses their helpers) and runs the doc's tests for it.
func TestDocCustomPolicyPassesItsTests(t *testing.T) {
	examples := docExamples(t)
	modules := shippedRegoModules(t)
	for _, name := range []string{"custom-policy", "custom-policy-test"} {
		m, err := ast.ParseModuleWithOpts(name+".rego", docExample(t, examples, name), ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatalf("example %s: %v", name, err)
		}
		modules[name+".rego"] = m
	}
	ch, err := tester.NewRunner().SetModules(modules).RaiseBuiltinErrors(true).RunTests(context.Background(), nil)
	if err != nil {
		t.Fatalf("compiling the doc's custom policy with the shipped ones: %v", err)
	}
	ran := 0
	for r := range ch {
		ran++
		if !r.Pass() {
			t.Errorf("%s (error: %v, failed at: %v)", r, r.Error, r.FailedAt)
		}
	}
	if ran == 0 {
		t.Fatal("the doc's custom policy test has no test_ rules")
	}
}

// TestDocNamesEveryShippedPolicy: each policy id a shipped rule can report is
// documented, so that users know what to put in params.disabled.
func TestDocNamesEveryShippedPolicy(t *testing.T) {
	doc, err := os.ReadFile(policyDoc)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for path := range shippedRegoModules(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, match := range regexp.MustCompile(`"policy": "([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
			ids[match[1]] = true
		}
	}
	if len(ids) == 0 {
		t.Fatal(`no "policy": "<id>" found in the shipped policies`)
	}
	for id := range ids {
		if !strings.Contains(string(doc), "| `"+id+"` |") {
			t.Errorf("policy id %q is not in a table row of %s", id, policyDoc)
		}
	}
}
