package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/claimwarden/claimwarden/policies"
)

// Output formats.
const (
	FormatTable    = "table"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
	FormatSARIF    = "sarif"
	FormatJUnit    = "junit"
	FormatGitHub   = "github"
)

// Formats lists the output formats, in the order help text names them.
var Formats = []string{FormatTable, FormatJSON, FormatMarkdown, FormatSARIF, FormatJUnit, FormatGitHub}

// WriteOptions tune Write.
type WriteOptions struct {
	// Colour (table only) marks verdicts with ANSI colours, for a terminal.
	Colour bool
	// Version is claimwarden's, which SARIF names the tool's.
	Version string
}

// Write renders r in format.
func Write(w io.Writer, r *Report, format string, o WriteOptions) error {
	switch format {
	case FormatTable:
		return writeTable(w, r, o.Colour)
	case FormatSARIF:
		return writeSARIF(w, r, o.Version)
	case FormatJUnit:
		return writeJUnit(w, r)
	case FormatGitHub:
		return writeGitHub(w, r)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	case FormatMarkdown:
		_, err := io.WriteString(w, Markdown(r))
		return err
	}
	return fmt.Errorf("output format %q is not one of %s", format, strings.Join(Formats, ", "))
}

// row is one line of the plan: a claim, or a StatefulSet's templates.
type row struct {
	statefulSet, claim, from, to, verdict string
	reasons                               []string
}

// rows flattens the changed StatefulSets into plan rows, denials first in
// each row's reasons, then policy warnings, then what else changes.
func rows(r *Report) []row {
	var out []row
	for _, st := range r.StatefulSets {
		if st.Status != StatusChanged {
			continue
		}
		name := st.Namespace + "/" + st.Name
		for _, c := range st.Claims {
			reasons := reasonTexts(c.Denials, "")
			reasons = append(reasons, reasonTexts(c.Warnings, "warning ")...)
			for _, ch := range c.Changes {
				reasons = append(reasons, "also "+ch)
			}
			out = append(out, row{name, c.Name, c.From, c.To, c.Verdict, reasons})
		}
		if t := st.Templates; t != nil {
			var reasons []string
			if len(st.TemplatesAdded) > 0 {
				reasons = append(reasons, "added "+strings.Join(st.TemplatesAdded, ", "))
			}
			if len(st.TemplatesRemoved) > 0 {
				reasons = append(reasons, "removed "+strings.Join(st.TemplatesRemoved, ", "))
			}
			reasons = append(reasons, reasonTexts(t.Denials, "")...)
			reasons = append(reasons, reasonTexts(t.Warnings, "warning ")...)
			what := "(templates)"
			if len(st.TemplatesAdded)+len(st.TemplatesRemoved) == 0 {
				what = "(re-create)" // a policy spoke about the re-create itself
			}
			out = append(out, row{name, what, "", "", t.Verdict, reasons})
		}
	}
	return out
}

// costRow is one line of the cost table: a StatefulSet, or the total.
type costRow struct {
	statefulSet, capacity, monthly, change string
}

// costRows are the StatefulSets whose cost changes, then the total; none
// without prices.
func costRows(r *Report) []costRow {
	if r.Cost == nil {
		return nil
	}
	row := func(name string, c *Cost) costRow {
		return costRow{name, c.CapacityFrom + " → " + c.CapacityTo, money(c.MonthlyFrom) + " → " + money(c.MonthlyTo), signedMoney(c.MonthlyDelta)}
	}
	var out []costRow
	for _, st := range r.StatefulSets {
		if st.Cost != nil {
			out = append(out, row(st.Namespace+"/"+st.Name, st.Cost))
		}
	}
	return append(out, row("total", r.Cost))
}

func money(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// signedMoney marks increases with "+", as the max-cost-increase policy does.
func signedMoney(x float64) string {
	if x > 0 {
		return "+" + money(x)
	}
	return money(x)
}

func reasonTexts(rs []policies.Reason, prefix string) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, prefix+r.Policy+": "+r.Message)
	}
	return out
}

// headline sums the report up in one sentence.
func headline(r *Report) string {
	s := r.Summary
	var b strings.Builder
	switch s.Verdict {
	case NothingToDo:
		b.WriteString("nothing to do: no claim changes")
	default:
		fmt.Fprintf(&b, "%s: %s change%s %s (%d allowed, %d denied)", s.Verdict, plural(s.Changed, "StatefulSet"), verbS(s.Changed), plural(s.Claims, "claim"), s.Allowed, s.Denied)
	}
	fmt.Fprintf(&b, "; %d unchanged, %d new, %d ignored", s.Unchanged, s.New, s.Ignored)
	return b.String()
}

// verbS is the third-person "s" of "changes" for one subject.
func verbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

// notes are the notes of every StatefulSet that has some, new and ignored
// ones named so.
func notes(r *Report) []string {
	var out []string
	for _, st := range r.StatefulSets {
		if len(st.Notes) == 0 {
			continue
		}
		prefix := ""
		if st.Status == StatusNew || st.Status == StatusIgnored {
			prefix = st.Status + " "
		}
		out = append(out, fmt.Sprintf("%s%s/%s: %s", prefix, st.Namespace, st.Name, strings.Join(st.Notes, "; ")))
	}
	return out
}
