package main

import (
	"fmt"
	"slices"
	"strings"
)

// column is one version's run: its results, or why it has none.
type column struct {
	Version string
	// Failed says why no test ran (the control plane did not build, say).
	Failed  string
	Results map[string]*result
}

// cell is one scenario on one version: ✓, ✗ naming the failed tests, or
// "not run"; notes are what the tests logged about the server's branch.
func cell(s scenario, c column) (text string, notes []string) {
	if c.Failed != "" {
		return "—", nil
	}
	var failed, missing []string
	for _, t := range s.Tests {
		r := c.Results[t.Name]
		switch {
		case r == nil || !r.Ran:
			missing = append(missing, t.Name)
		case !r.Passed:
			failed = append(failed, t.Name)
		default:
			for _, n := range r.Notes {
				notes = appendOnce(notes, n)
			}
		}
	}
	switch {
	case len(failed) > 0:
		return "✗ " + strings.Join(failed, ", "), notes
	case len(missing) > 0:
		return "not run: " + strings.Join(missing, ", "), notes
	}
	return "✓", notes
}

// renderMatrix is the Markdown table, scenarios by versions, with the notes
// as numbered footnotes and the versions that did not run below it.
func renderMatrix(ss []scenario, cols []column) string {
	var b strings.Builder
	b.WriteString("| |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c.Version)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(cols)))
	b.WriteString("\n")
	var footnotes []string
	for _, s := range ss {
		fmt.Fprintf(&b, "| %s |", s.Name)
		for _, c := range cols {
			text, notes := cell(s, c)
			for _, n := range notes {
				i := slices.Index(footnotes, n)
				if i < 0 {
					footnotes = append(footnotes, n)
					i = len(footnotes) - 1
				}
				text += fmt.Sprintf(" [%d]", i+1)
			}
			fmt.Fprintf(&b, " %s |", text)
		}
		b.WriteString("\n")
	}
	if len(footnotes) > 0 {
		b.WriteString("\n")
	}
	for i, n := range footnotes {
		fmt.Fprintf(&b, "[%d] %s\n", i+1, n)
	}
	for _, c := range cols {
		if c.Failed != "" {
			fmt.Fprintf(&b, "\n%s did not run: %s\n", c.Version, c.Failed)
		}
	}
	return b.String()
}
