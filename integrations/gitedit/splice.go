package gitedit

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// splice replaces, in src, the text of scalar n (whose position the
// decoder of src recorded) with value written in n's quoting style. The
// text found there must say what n says, or nothing is changed: an edit
// never lands anywhere but on the value it was asked to change.
func splice(src []byte, n *yaml.Node, value string, flow bool) ([]byte, error) {
	start, err := offset(src, n.Line, n.Column)
	if err != nil {
		return nil, err
	}
	// An anchored scalar's position is its anchor's: the value follows it.
	if a := "&" + n.Anchor; n.Anchor != "" && bytes.HasPrefix(src[start:], []byte(a)) {
		start += len(a)
		for start < len(src) && (src[start] == ' ' || src[start] == '\t') {
			start++
		}
	}
	end, err := scalarEnd(src, start, n.Style, flow)
	if err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line, err)
	}
	if got, err := scalarText(src[start:end], n.Style); err != nil || got != n.Value {
		return nil, fmt.Errorf("line %d column %d: the text there (%q) is not the value %q", n.Line, n.Column, src[start:end], n.Value)
	}
	var repl string
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		repl = strconv.Quote(value)
	case n.Style&yaml.SingleQuotedStyle != 0:
		repl = "'" + strings.ReplaceAll(value, "'", "''") + "'"
	default:
		repl = value
	}
	out := make([]byte, 0, len(src)-(end-start)+len(repl))
	out = append(out, src[:start]...)
	out = append(out, repl...)
	return append(out, src[end:]...), nil
}

// offset is the byte offset of line and column (both from 1; the column
// in characters, as the decoder counts them).
func offset(src []byte, line, column int) (int, error) {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return 0, fmt.Errorf("line %d is past the end of the file", line)
		}
		off += i + 1
	}
	for c := 1; c < column; c++ {
		if off >= len(src) || src[off] == '\n' {
			return 0, fmt.Errorf("column %d is past the end of line %d", column, line)
		}
		_, size := utf8.DecodeRune(src[off:])
		off += size
	}
	return off, nil
}

// scalarEnd is where the scalar starting at start ends.
func scalarEnd(src []byte, start int, style yaml.Style, flow bool) (int, error) {
	switch {
	case style&yaml.DoubleQuotedStyle != 0:
		for i := start + 1; i < len(src); i++ {
			switch src[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			case '\n':
				return 0, fmt.Errorf("a quoted size over several lines is not edited")
			}
		}
	case style&yaml.SingleQuotedStyle != 0:
		for i := start + 1; i < len(src); i++ {
			switch {
			case src[i] == '\'' && i+1 < len(src) && src[i+1] == '\'':
				i++
			case src[i] == '\'':
				return i + 1, nil
			case src[i] == '\n':
				return 0, fmt.Errorf("a quoted size over several lines is not edited")
			}
		}
	case style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return 0, fmt.Errorf("a size in a block scalar is not edited")
	default:
		end := start
		for end < len(src) && src[end] != '\n' && src[end] != '\r' {
			if src[end] == '#' && end > start && (src[end-1] == ' ' || src[end-1] == '\t') {
				break
			}
			if flow && (src[end] == ',' || src[end] == '}' || src[end] == ']') {
				break
			}
			end++
		}
		for end > start && (src[end-1] == ' ' || src[end-1] == '\t') {
			end--
		}
		return end, nil
	}
	return 0, fmt.Errorf("the quoted size is not closed")
}

// scalarText is what the scalar's text says.
func scalarText(text []byte, style yaml.Style) (string, error) {
	switch {
	case style&yaml.DoubleQuotedStyle != 0:
		return strconv.Unquote(string(text))
	case style&yaml.SingleQuotedStyle != 0:
		return strings.ReplaceAll(string(text[1:len(text)-1]), "''", "'"), nil
	}
	return string(text), nil
}
