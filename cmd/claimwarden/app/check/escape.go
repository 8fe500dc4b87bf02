package check

import (
	"fmt"
	"strings"
	"unicode"
)

// Text in the plan comes from manifests and from policies quoting them: a
// pull request chooses it. These render it as text and nothing else.

// markdownText escapes s for Markdown, in a table cell or a list item:
// each character that can open or close inline markup (code span, emphasis,
// strikethrough, link, HTML tag or comment, entity, math, mention, issue
// reference, table cell) is backslash-escaped, and so is punctuation that
// starts s, which could open a block (heading, list, quote); a line break
// becomes <br>, and control and bidirectional formatting characters are
// shown as escapes. CommonMark renders a backslash-escaped ASCII
// punctuation character as itself.
func markdownText(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\n':
			b.WriteString("<br>")
		case strings.ContainsRune(inlineMarkup, r) || i == 0 && r < 0x80 && (unicode.IsPunct(r) || unicode.IsSymbol(r)):
			b.WriteByte('\\')
			b.WriteRune(r)
		case invisible(r):
			b.WriteString(`\` + visible(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// inlineMarkup are the characters markdownText escapes anywhere.
const inlineMarkup = "\\`*_~[]<>|&$@#"

// markdownCode renders s as a code span in a table cell: fenced by more
// backticks than it holds in a row, "|" escaped (GFM splits cells at it
// even there), control characters shown as terminalText shows them.
func markdownCode(s string) string {
	s = strings.ReplaceAll(terminalText(s), "|", `\|`)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// terminalText shows control and bidirectional formatting characters as
// escapes (\x1b, \n, \u202e), so that s cannot move the cursor, colour the
// terminal, start a line of its own or reorder what follows.
func terminalText(s string) string {
	if !strings.ContainsFunc(s, invisible) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if invisible(r) {
			b.WriteString(visible(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Printable is terminalText for messages of several lines: line breaks and
// tabs stay.
func Printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if invisible(r) && r != '\n' && r != '\t' {
			b.WriteString(visible(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func invisible(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// visible is the Go escape of r: \n, \x1b, \u202e.
func visible(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	}
	if r < 0x100 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}
