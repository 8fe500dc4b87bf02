package policies

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"unicode/utf8"
)

// decodeJSON decodes one JSON document into what encoding/json decodes it
// to with UseNumber (map[string]any, []any, string, json.Number, bool,
// nil), which is what OPA decodes JSON to before converting it to AST. It
// does that one job about twice as fast as encoding/json, mostly by
// allocating less: strings without escapes are slices of one copy of the
// document, and maps and slices are made at their final size.
//
// Anything it does not expect is an error; the caller then leaves the
// document to OPA.
func decodeJSON(b []byte) (any, error) {
	d := newJSONDecoder()
	defer d.release()
	return d.decode(b)
}

// decode decodes b, reusing d's scratch space.
func (d *jsonDecoder) decode(b []byte) (any, error) {
	d.s, d.i = string(b), 0
	defer func() { d.s = "" }()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.s) {
		return nil, errJSONSyntax
	}
	return v, nil
}

// jsonDecoders keeps decoders' scratch space between inputs.
var jsonDecoders = sync.Pool{New: func() any {
	return &jsonDecoder{members: make([]jsonMember, 0, 64), elems: make([]any, 0, 32)}
}}

func newJSONDecoder() *jsonDecoder { return jsonDecoders.Get().(*jsonDecoder) }

// release returns d to the pool; its scratch space holds nothing by then.
func (d *jsonDecoder) release() { jsonDecoders.Put(d) }

var errJSONSyntax = errors.New("unexpected JSON")

// maxJSONDepth bounds recursion; deeper documents are left to OPA.
const maxJSONDepth = 200

type jsonDecoder struct {
	s string
	i int
	// Members and elements of the objects and arrays being read, nested
	// ones above their parent's: each is copied out at its final size.
	members []jsonMember
	elems   []any
}

type jsonMember struct {
	key   string
	value any
}

func (p *jsonDecoder) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonDecoder) value(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errJSONSyntax
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, errJSONSyntax
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return s, nil
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, errJSONSyntax
}

func (p *jsonDecoder) literal(word string, v any) (any, error) {
	if !strings.HasPrefix(p.s[p.i:], word) {
		return nil, errJSONSyntax
	}
	p.i += len(word)
	return v, nil
}

func (p *jsonDecoder) object(depth int) (any, error) {
	p.i++ // {
	base := len(p.members)
	defer func() {
		clear(p.members[base:])
		p.members = p.members[:base]
	}()
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return map[string]any{}, nil
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, errJSONSyntax
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, errJSONSyntax
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.members = append(p.members, jsonMember{k, v})
		p.space()
		if p.i >= len(p.s) {
			return nil, errJSONSyntax
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			members := p.members[base:]
			obj := make(map[string]any, len(members))
			for _, m := range members {
				obj[m.key] = m.value
			}
			if len(obj) != len(members) {
				// A repeated key, which encoding/json does not write.
				return nil, errJSONSyntax
			}
			return obj, nil
		default:
			return nil, errJSONSyntax
		}
	}
}

func (p *jsonDecoder) array(depth int) (any, error) {
	p.i++ // [
	base := len(p.elems)
	defer func() {
		clear(p.elems[base:])
		p.elems = p.elems[:base]
	}()
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return []any{}, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.elems = append(p.elems, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, errJSONSyntax
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return append([]any(nil), p.elems[base:]...), nil
		default:
			return nil, errJSONSyntax
		}
	}
}

// str reads a string token. Without escapes (what encoding/json writes for
// nearly every value) it is the text between the quotes; with escapes it is
// what encoding/json decodes them to.
func (p *jsonDecoder) str() (string, error) {
	start := p.i
	p.i++ // "
	escaped := false
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			if escaped {
				var s string
				if err := json.Unmarshal([]byte(p.s[start:p.i]), &s); err != nil {
					return "", err
				}
				return s, nil
			}
			s := p.s[start+1 : p.i-1]
			if !utf8.ValidString(s) {
				// encoding/json would replace invalid bytes with U+FFFD.
				return "", errJSONSyntax
			}
			return s, nil
		case c == '\\':
			escaped = true
			p.i += 2
		case c < 0x20:
			return "", errJSONSyntax
		default:
			p.i++
		}
	}
	return "", errJSONSyntax
}

// number reads a number token with JSON's grammar, keeping its text.
func (p *jsonDecoder) number() (any, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++ // no leading zeros
	} else if !p.digits() {
		return nil, errJSONSyntax
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, errJSONSyntax
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return nil, errJSONSyntax
		}
	}
	return json.Number(p.s[start:p.i]), nil
}

func (p *jsonDecoder) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}
