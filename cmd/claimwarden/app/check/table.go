package check

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ANSI colours of the table.
const (
	red    = "\x1b[31m"
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	reset  = "\x1b[0m"
)

// writeTable writes the plan as aligned columns; what manifests and
// policies wrote cannot drive the terminal (terminalText). The columns are padded
// here rather than by text/tabwriter, which would count a colour's escape
// sequence as width and misalign the colourful rows.
func writeTable(w io.Writer, r *Report, colour bool) error {
	paint := func(code, s string) string {
		if !colour || s == "" {
			return s
		}
		return code + s + reset
	}
	var b strings.Builder
	rs := rows(r)
	if len(rs) > 0 {
		header := []string{"STATEFULSET", "CLAIM", "FROM", "TO", "VERDICT", "REASONS"}
		cells := [][]string{header}
		for _, x := range rs {
			line := []string{x.statefulSet, x.claim, x.from, x.to, x.verdict, strings.Join(x.reasons, "; ")}
			for i := range line {
				line[i] = terminalText(line[i])
			}
			cells = append(cells, line)
		}
		widths := make([]int, len(header))
		for _, line := range cells {
			for i, c := range line {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
		for n, line := range cells {
			var parts []string
			for i, c := range line {
				padded := c
				if i < len(line)-1 {
					padded += strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
				}
				if i == 4 && n > 0 {
					padded = strings.Replace(padded, c, paint(verdictColour(c), c), 1)
				}
				parts = append(parts, padded)
			}
			b.WriteString(strings.TrimRight(strings.Join(parts, "  "), " ") + "\n")
		}
		b.WriteString("\n")
	}
	for _, o := range notes(r) {
		b.WriteString(terminalText(o) + "\n")
	}
	if len(r.Warnings) > 0 {
		b.WriteString(paint(yellow, "warnings:") + "\n")
		for _, w := range r.Warnings {
			b.WriteString("  " + terminalText(w.String()) + "\n")
		}
	}
	verdict, rest, _ := strings.Cut(headline(r), ":")
	fmt.Fprintf(&b, "%s:%s\n", paint(verdictColour(verdict), verdict), rest)
	_, err := io.WriteString(w, b.String())
	return err
}

func verdictColour(v string) string {
	switch v {
	case Denied:
		return red
	case Allowed:
		return green
	}
	return ""
}
