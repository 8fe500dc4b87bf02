package policies

import (
	"fmt"

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
		r, ok := readResize(elems.Elem(i).Value)
		if !ok {
			return nil, wrong("contains %s", truncate(elems.Elem(i).Value.String()))
		}
		out = append(out, r)
	}
	return out, errs
}

func readResize(v ast.Value) (Resize, bool) {
	o, ok := v.(ast.Object)
	if !ok {
		return Resize{}, false
	}
	msg, okMsg := stringField(o, "msg")
	policy, okPolicy := stringField(o, "policy")
	t := o.Get(ast.InternedTerm("to"))
	if !okMsg || !okPolicy || t == nil {
		return Resize{}, false
	}
	n, ok := t.Value.(ast.Number)
	if !ok {
		return Resize{}, false
	}
	to, ok := n.Int64()
	if !ok || to <= 0 {
		return Resize{}, false
	}
	r := Resize{Policy: policy, ToBytes: to, Message: msg}
	if t := o.Get(ast.InternedTerm("now")); t != nil {
		b, ok := t.Value.(ast.Boolean)
		if !ok {
			return Resize{}, false
		}
		r.Now = bool(b)
	}
	return r, true
}
