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
		cells := [][]string{{"STATEFULSET", "CLAIM", "FROM", "TO", "VERDICT", "REASONS"}}
		for _, x := range rs {
			cells = append(cells, []string{x.statefulSet, x.claim, x.from, x.to, x.verdict, strings.Join(x.reasons, "; ")})
		}
		writeColumns(&b, cells, func(n, i int, cell, padded string) string {
			if i == 4 && n > 0 {
				return strings.Replace(padded, cell, paint(verdictColour(cell), cell), 1)
			}
			return padded
		})
		b.WriteString("\n")
	}
	if cs := costRows(r); len(cs) > 0 {
		cells := [][]string{{"STATEFULSET", "CAPACITY", "MONTHLY COST", "CHANGE"}}
		for _, x := range cs {
			cells = append(cells, []string{x.statefulSet, x.capacity, x.monthly, x.change})
		}
		writeColumns(&b, cells, func(_, _ int, _, padded string) string { return padded })
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

// writeColumns writes cells as aligned columns, the text made
// terminalText; paint may colour a padded cell (row n, column i).
func writeColumns(b *strings.Builder, cells [][]string, paint func(n, i int, cell, padded string) string) {
	for _, line := range cells {
		for i := range line {
			line[i] = terminalText(line[i])
		}
	}
	widths := make([]int, len(cells[0]))
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
			parts = append(parts, paint(n, i, c, padded))
		}
		b.WriteString(strings.TrimRight(strings.Join(parts, "  "), " ") + "\n")
	}
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
