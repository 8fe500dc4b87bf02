package policies

import (
	"fmt"
	"math/big"

	"github.com/open-policy-agent/opa/v1/ast"
)

// wantResizeShape is quoted by every wrong-shape denial of resize.
const wantResizeShape = `want a set of {"policy": string, "to": whole bytes > 0, "msg": string, "now": optional boolean} objects`

// readResizes reads rule set resize from its binding, as readReasons reads
// deny and warn: a malformed proposal is reported in errs (a denial), never
// taken as a size.
func readResizes(binding any, errs []string) ([]Resize, []string) {
	wrong := func(format string, args ...any) []string {
		return append(errs, fmt.Sprintf("policy result of the wrong shape: data.claimwarden.claims.resize %s; %s",
			fmt.Sprintf(format, args...), wantResizeShape))
	}
	value, bad := ruleValue(binding)
	if bad != "" {
		return nil, wrong("%s", bad)
	}
	if value == nil {
		return nil, errs
	}
	set, ok := value.(ast.Set)
	if !ok {
		return nil, wrong("is a %s (%s)", ast.ValueName(value), truncate(value.String()))
	}
	elems := set.Sorted()
	out := make([]Resize, 0, elems.Len())
	for i := range elems.Len() {
		r, problem := readResize(elems.Elem(i).Value)
		if problem != "" {
			return nil, wrong("%s", problem)
		}
		out = append(out, r)
	}
	return out, errs
}

// readResize reads one proposal; a malformed one gives the problem, naming
// the policy when it says which.
func readResize(v ast.Value) (Resize, string) {
	o, ok := v.(ast.Object)
	if !ok {
		return Resize{}, fmt.Sprintf("contains %s", truncate(v.String()))
	}
	msg, okMsg := stringField(o, "msg")
	policy, okPolicy := stringField(o, "policy")
	t := o.Get(ast.InternedTerm("to"))
	if !okMsg || !okPolicy || t == nil {
		return Resize{}, fmt.Sprintf("contains %s", truncate(v.String()))
	}
	to, ok := wholeBytes(t.Value)
	if !ok {
		return Resize{}, fmt.Sprintf("of policy %q has \"to\": %s, not whole bytes > 0 within int64", policy, truncate(t.Value.String()))
	}
	r := Resize{Policy: policy, ToBytes: to, Message: msg}
	if t := o.Get(ast.InternedTerm("now")); t != nil {
		b, ok := t.Value.(ast.Boolean)
		if !ok {
			return Resize{}, fmt.Sprintf("of policy %q has \"now\": %s, not a boolean", policy, truncate(t.Value.String()))
		}
		r.Now = bool(b)
	}
	return r, ""
}

// wholeBytes reads a number that is an exact integer in 1..MaxInt64 in any
// JSON notation: Rego keeps a number as written, so a size computed from a
// parameter may read 3.221225472e+09. big.Rat parses exactly and refuses
// huge exponents, so the work stays bounded.
func wholeBytes(v ast.Value) (int64, bool) {
	n, ok := v.(ast.Number)
	if !ok {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() || r.Sign() <= 0 || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}
