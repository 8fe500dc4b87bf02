package policies

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

// wantShape is quoted by every wrong-shape denial, so a policy author sees
// what the engine accepts.
const wantShape = `want a set of strings or {"policy": string, "msg": string} objects`

// readReasons reads one rule set (deny or warn) from its binding: an array
// of zero elements (no such rule) or one (the rule's value). The value must
// be a set (or array) whose elements are strings or objects with a string
// "msg" and an optional string "policy". Anything else is reported in errs,
// which the caller turns into denials: a malformed answer is not an allow.
func readReasons(rule string, binding any, errs []string) ([]Reason, []string) {
	wrong := func(format string, args ...any) []string {
		return append(errs, fmt.Sprintf("policy result of the wrong shape: data.claimwarden.claims.%s %s; %s",
			rule, fmt.Sprintf(format, args...), wantShape))
	}
	value, bad := ruleValue(binding)
	if bad != "" {
		return nil, wrong("%s", bad)
	}
	if value == nil {
		return nil, errs
	}
	var elems *ast.Array
	switch x := value.(type) {
	case ast.Set:
		elems = x.Sorted() // sorted: verdicts are deterministic
	case *ast.Array:
		elems = x
	default:
		return nil, wrong("is a %s (%s)", ast.ValueName(x), truncate(x.String()))
	}
	out := make([]Reason, 0, elems.Len())
	for i := range elems.Len() {
		el := elems.Elem(i)
		r, ok := readReason(el.Value)
		if !ok {
			return nil, wrong("contains a %s (%s)", ast.ValueName(el.Value), truncate(el.Value.String()))
		}
		out = append(out, r)
	}
	return out, errs
}

// ruleValue is a rule set's value from its binding: an array of zero
// elements (no such rule: nil) or one. bad describes a binding that is
// not such an array.
func ruleValue(binding any) (value ast.Value, bad string) {
	t, ok := binding.(*ast.Term)
	if !ok {
		return nil, fmt.Sprintf("is %T", binding)
	}
	wrapper, ok := t.Value.(*ast.Array)
	if !ok || wrapper.Len() == 0 {
		return nil, ""
	}
	return wrapper.Elem(0).Value, ""
}

// readReason reads one element: "msg" or {"policy": id, "msg": "msg"}.
func readReason(v ast.Value) (Reason, bool) {
	switch x := v.(type) {
	case ast.String:
		return Reason{Policy: UnnamedPolicy, Message: string(x)}, true
	case ast.Object:
		msg, ok := stringField(x, "msg")
		if !ok {
			return Reason{}, false
		}
		r := Reason{Policy: UnnamedPolicy, Message: msg}
		if p := x.Get(ast.InternedTerm("policy")); p != nil {
			id, ok := p.Value.(ast.String)
			if !ok {
				return Reason{}, false
			}
			if id != "" {
				r.Policy = string(id)
			}
		}
		return r, true
	}
	return Reason{}, false
}

func stringField(o ast.Object, key string) (string, bool) {
	t := o.Get(ast.InternedTerm(key))
	if t == nil {
		return "", false
	}
	s, ok := t.Value.(ast.String)
	return string(s), ok
}

// truncate keeps a quoted value short enough for a condition message.
func truncate(s string) string {
	const limit = 120
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}
