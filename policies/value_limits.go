package policies

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// DefaultValueLimit is the default Options.ValueLimitBytes.
const DefaultValueLimit = 16 << 20

// maxNumberDigits bounds the integers arithmetic may produce: OPA computes
// integers exactly, and multiplying numbers of millions of digits takes
// seconds in one step that the timeout cannot interrupt.
const maxNumberDigits = 4096

// termBytes approximates what one element of a collection costs on the
// heap (term, value header, slot): the outputs of split or numbers.range
// are small in bytes but not in memory.
const termBytes = 64

// OPA has no memory bound for an evaluation, and it checks for
// cancellation between evaluation steps only: one builtin call that
// builds a 4 GiB string (a rule doubling a string with concat, 28 rules
// deep) allocates it all before the timeout is noticed. The builtins below
// are the ones whose result can outgrow their arguments; each is wrapped,
// once for the process, to predict the size of its result from its
// arguments and fail (a builtin error, which the engine's strict builtin
// errors turn into a denial) when that exceeds the limit. Since no result
// is larger than the limit, every argument of the next step is bounded too,
// so a chain stops within a small multiple of the limit. Builtins whose
// result is no larger than a small multiple of their arguments (upper,
// trim, substring, sets and objects, which grow only by one evaluation
// step per element) are left alone. Not covered: graph.reachable_paths and
// walk, which enumerate paths one evaluation step at a time and are
// bounded by the timeout.
var valueLimits = map[string]func(args []*ast.Term, limit float64) float64{
	ast.Concat.Name: func(a []*ast.Term, _ float64) float64 {
		n, total := 0.0, 0.0
		forEach(a[1], func(t *ast.Term) { n++; total += strLen(t) })
		return total + math.Max(n-1, 0)*strLen(a[0])
	},
	ast.Sprintf.Name: func(a []*ast.Term, limit float64) float64 {
		format := string(asString(a[0]))
		// Each verb prints at most one argument: a string as it is,
		// anything else quoted and escaped (at most six bytes per byte),
		// padded to the widths the format spells.
		widest := 0.0
		forEach(a[1], func(t *ast.Term) {
			if _, ok := t.Value.(ast.String); ok {
				widest = math.Max(widest, strLen(t))
			} else {
				widest = math.Max(widest, 6*measure(t, limit).bytes)
			}
		})
		verbs := float64(strings.Count(format, "%"))
		return float64(len(format)) + formatWidths(format) + verbs*widest
	},
	ast.Replace.Name: func(a []*ast.Term, _ float64) float64 {
		return replaced(strLen(a[0]), strLen(a[1]), strLen(a[2]))
	},
	ast.ReplaceN.Name: func(a []*ast.Term, _ float64) float64 {
		minOld, maxNew := math.Inf(1), 0.0
		if o, ok := a[0].Value.(ast.Object); ok {
			o.Foreach(func(k, v *ast.Term) { minOld = math.Min(minOld, strLen(k)); maxNew = math.Max(maxNew, strLen(v)) })
		}
		return replaced(strLen(a[1]), minOld, maxNew)
	},
	ast.RegexReplace.Name: func(a []*ast.Term, _ float64) float64 {
		// Every match (at most one per position) is replaced by the value,
		// whose $n references insert at most the whole input in all.
		s, v := strLen(a[0]), strLen(a[2])
		return s + (s+1)*v + v*s
	},
	ast.Split.Name: func(a []*ast.Term, _ float64) float64 {
		return strLen(a[0]) + termBytes*(strLen(a[0])/math.Max(strLen(a[1]), 1)+1)
	},
	ast.RegexSplit.Name:                 func(a []*ast.Term, _ float64) float64 { return pieces(a[1], a[0]) },
	ast.RegexFind.Name:                  func(a []*ast.Term, _ float64) float64 { return pieces(a[1], a[0]) },
	ast.RegexFindAllStringSubmatch.Name: func(a []*ast.Term, _ float64) float64 { return pieces(a[1], a[0]) },
	ast.IndexOfN.Name:                   func(a []*ast.Term, _ float64) float64 { return termBytes * (strLen(a[0]) + 1) },
	ast.NumbersRange.Name: func(a []*ast.Term, _ float64) float64 {
		return termBytes * (math.Abs(num(a[1])-num(a[0])) + 1)
	},
	ast.NumbersRangeStep.Name: func(a []*ast.Term, _ float64) float64 {
		return termBytes * (math.Abs(num(a[1])-num(a[0]))/math.Max(math.Abs(num(a[2])), 1) + 1)
	},
	ast.ArrayConcat.Name: func(a []*ast.Term, _ float64) float64 {
		return termBytes * (collLen(a[0]) + collLen(a[1]))
	},
	ast.JSONMarshal.Name: func(a []*ast.Term, limit float64) float64 { return 6 * measure(a[0], limit).bytes },
	ast.JSONMarshalWithOptions.Name: func(a []*ast.Term, limit float64) float64 {
		m := measure(a[0], limit)
		// Pretty printing writes prefix and indent (bounded by the
		// options' size) on every line, once per level of depth.
		return 6*m.bytes + m.nodes*measure(a[1], limit).bytes*float64(m.depth+1)
	},
	ast.YAMLMarshal.Name: func(a []*ast.Term, limit float64) float64 {
		m := measure(a[0], limit)
		return 6*m.bytes + m.nodes*2*float64(m.depth+1)
	},
	ast.JSONUnmarshal.Name: func(a []*ast.Term, _ float64) float64 { return termBytes / 2 * strLen(a[0]) },
	ast.YAMLUnmarshal.Name: func(a []*ast.Term, _ float64) float64 { return termBytes / 2 * strLen(a[0]) },
	ast.JSONPatch.Name: func(a []*ast.Term, limit float64) float64 {
		// Every copy or add may duplicate the whole document.
		return measure(a[0], limit).bytes*(collLen(a[1])+1) + measure(a[1], limit).bytes
	},
	ast.Base64Encode.Name:         func(a []*ast.Term, _ float64) float64 { return 4*strLen(a[0])/3 + 4 },
	ast.Base64UrlEncode.Name:      func(a []*ast.Term, _ float64) float64 { return 4*strLen(a[0])/3 + 4 },
	ast.Base64UrlEncodeNoPad.Name: func(a []*ast.Term, _ float64) float64 { return 4*strLen(a[0])/3 + 4 },
	ast.HexEncode.Name:            func(a []*ast.Term, _ float64) float64 { return 2 * strLen(a[0]) },
	ast.URLQueryEncode.Name:       func(a []*ast.Term, _ float64) float64 { return 3 * strLen(a[0]) },
	ast.URLQueryEncodeObject.Name: func(a []*ast.Term, limit float64) float64 { return 3 * measure(a[0], limit).bytes },
	ast.GlobQuoteMeta.Name:        func(a []*ast.Term, _ float64) float64 { return 2 * strLen(a[0]) },
	ast.JWTEncodeSign.Name: func(a []*ast.Term, limit float64) float64 {
		return 2 * 6 * (measure(a[0], limit).bytes + measure(a[1], limit).bytes)
	},
	ast.JWTEncodeSignRaw.Name: func(a []*ast.Term, _ float64) float64 { return 2 * (strLen(a[0]) + strLen(a[1])) },
	ast.RenderTemplate.Name: func(a []*ast.Term, limit float64) float64 {
		// Each range may repeat what it encloses once per element of the
		// largest collection; nested ranges multiply.
		tmpl := string(asString(a[0]))
		m := measure(a[1], limit)
		return (strLen(a[0]) + 6*m.bytes) * math.Pow(math.Max(m.widest, 1), float64(strings.Count(tmpl, "range")))
	},
}

// numberLimits predict the digits of arithmetic results.
var numberLimits = map[string]func(args []*ast.Term) float64{
	ast.Plus.Name:          func(a []*ast.Term) float64 { return math.Max(digits(a[0]), digits(a[1])) + 1 },
	ast.Minus.Name:         func(a []*ast.Term) float64 { return math.Max(digits(a[0]), digits(a[1])) + 1 },
	ast.Multiply.Name:      func(a []*ast.Term) float64 { return digits(a[0]) + digits(a[1]) },
	ast.BitsShiftLeft.Name: func(a []*ast.Term) float64 { return digits(a[0]) + num(a[1])/3 + 1 },
}

func init() {
	for name, predict := range valueLimits {
		// OPA hands pure builtins no context unless told otherwise; the
		// limit of the evaluation travels in it.
		ast.BuiltinMap[name].CanSkipBctx = false
		wrapBuiltin(name, func(bctx topdown.BuiltinContext, args []*ast.Term) error {
			limit := valueLimitOf(bctx.Context)
			size := predict(args, limit)
			if size > limit {
				return fmt.Errorf("its result (about %.0f bytes) would exceed policies.valueLimitBytes (%.0f bytes)", size, limit)
			}
			return checkBudget(bctx.Context, size)
		})
	}
	for name, predict := range numberLimits {
		wrapBuiltin(name, func(_ topdown.BuiltinContext, args []*ast.Term) error {
			if d := predict(args); d > maxNumberDigits {
				return fmt.Errorf("its result (about %.0f digits) would exceed %d digits", d, maxNumberDigits)
			}
			return nil
		})
	}
}

// wrapBuiltin replaces OPA's builtin name by one that calls check first.
// It runs from init only: OPA's registry is a plain map, read by every
// evaluation without a lock.
func wrapBuiltin(name string, check func(topdown.BuiltinContext, []*ast.Term) error) {
	inner := topdown.GetBuiltin(name)
	if inner == nil {
		panic("policies: OPA has no builtin " + name)
	}
	topdown.RegisterBuiltinFunc(name, func(bctx topdown.BuiltinContext, args []*ast.Term, iter func(*ast.Term) error) error {
		if err := check(bctx, args); err != nil {
			return err
		}
		return inner(bctx, args, iter)
	})
}

type valueLimitKey struct{}

// withValueLimit makes evaluations under ctx use limit.
func withValueLimit(ctx context.Context, limit int64) context.Context {
	return context.WithValue(ctx, valueLimitKey{}, float64(limit))
}

// valueLimitOf is the limit of the evaluation, DefaultValueLimit for one
// outside an Engine (opa test of the shipped policies).
func valueLimitOf(ctx context.Context) float64 {
	if l, ok := ctx.Value(valueLimitKey{}).(float64); ok {
		return l
	}
	return DefaultValueLimit
}

func asString(t *ast.Term) ast.String {
	s, _ := t.Value.(ast.String)
	return s
}

func strLen(t *ast.Term) float64 { return float64(len(asString(t))) }

// num is a number argument as a float; 0 for anything else (OPA's own
// type check then refuses it).
func num(t *ast.Term) float64 {
	n, ok := t.Value.(ast.Number)
	if !ok {
		return 0
	}
	f, _ := n.Float64()
	return f
}

func digits(t *ast.Term) float64 {
	n, _ := t.Value.(ast.Number)
	return float64(len(n))
}

func collLen(t *ast.Term) float64 {
	switch v := t.Value.(type) {
	case *ast.Array:
		return float64(v.Len())
	case ast.Set:
		return float64(v.Len())
	case ast.Object:
		return float64(v.Len())
	}
	return 0
}

func forEach(t *ast.Term, f func(*ast.Term)) {
	switch v := t.Value.(type) {
	case *ast.Array:
		v.Foreach(f)
	case ast.Set:
		v.Foreach(f)
	}
}

// replaced bounds the result of replacing in s (length n) every old
// (length at least oldLen) by new (length newLen): an empty old matches
// at every position.
func replaced(n, oldLen, newLen float64) float64 {
	if oldLen == 0 {
		return n + (n+1)*newLen
	}
	return n + n/oldLen*newLen
}

// pieces bounds a result with one element per match of pattern in s, each
// with its groups.
func pieces(s, pattern *ast.Term) float64 {
	groups := float64(strings.Count(string(asString(pattern)), "("))
	return strLen(s) + termBytes*(strLen(s)+1)*(groups+1)
}

// formatWidths sums every number a format spells (widths and precisions,
// "%9999999d"): the padding they may add.
func formatWidths(format string) float64 {
	total, cur := 0.0, 0.0
	for _, r := range format {
		if r >= '0' && r <= '9' {
			cur = cur*10 + float64(r-'0')
			continue
		}
		total, cur = total+cur, 0
	}
	return total + cur
}

// size is what measure found: bytes of strings, numbers and keys plus 8
// per element (separators, brackets), elements, the deepest nesting and
// the largest collection.
type size struct {
	bytes, nodes, widest float64
	depth                int
}

// measure walks t until it has seen more than limit bytes: a value built
// from shared parts ({"a": x, "b": x}, nested) can be exponentially larger
// than its memory, and the walk must not be.
func measure(t *ast.Term, limit float64) size {
	var s size
	var walk func(v ast.Value, depth int)
	walk = func(v ast.Value, depth int) {
		if s.bytes > limit {
			return
		}
		s.nodes++
		s.bytes += 8
		s.depth = max(s.depth, depth)
		switch x := v.(type) {
		case ast.String:
			s.bytes += float64(len(x))
		case ast.Number:
			s.bytes += float64(len(x))
		case *ast.Array:
			s.widest = math.Max(s.widest, float64(x.Len()))
			x.Foreach(func(e *ast.Term) { walk(e.Value, depth+1) })
		case ast.Set:
			s.widest = math.Max(s.widest, float64(x.Len()))
			x.Foreach(func(e *ast.Term) { walk(e.Value, depth+1) })
		case ast.Object:
			s.widest = math.Max(s.widest, float64(x.Len()))
			x.Foreach(func(k, e *ast.Term) { walk(k.Value, depth+1); walk(e.Value, depth+1) })
		}
	}
	walk(t.Value, 0)
	return s
}
