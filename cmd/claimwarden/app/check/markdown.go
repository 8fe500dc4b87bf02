package check

import (
	"fmt"
	"strings"
)

// markdownMaxRows bounds the table of a comment: hosts refuse comments
// above 64 KiB or so (GitHub: 65536 characters), and a reviewer reads the
// denials, which come first.
const markdownMaxRows = 200

// Markdown renders the plan for a pull-request comment: a headline, a
// table of the claim changes (denials first), the new and ignored
// StatefulSets and the warnings folded away. What manifests and policies
// wrote is escaped, so that it cannot forge a verdict or hide one.
func Markdown(r *Report) string {
	var b strings.Builder
	icon := map[string]string{Allowed: "✅", Denied: "❌", NothingToDo: "➖"}[r.Summary.Verdict]
	fmt.Fprintf(&b, "### %s claimwarden check: %s\n\n", icon, r.Summary.Verdict)
	fmt.Fprintf(&b, "%s.\n\n", upperFirst(headline(r)))

	rs := rows(r)
	// Denials first, keeping the plan's order otherwise.
	ordered := make([]row, 0, len(rs))
	for _, want := range []bool{true, false} {
		for _, x := range rs {
			if (x.verdict == Denied) == want {
				ordered = append(ordered, x)
			}
		}
	}
	if len(ordered) > 0 {
		b.WriteString("| StatefulSet | Claim | From | To | Verdict | Reasons |\n|---|---|---|---|---|---|\n")
		for i, x := range ordered {
			if i == markdownMaxRows {
				fmt.Fprintf(&b, "\n… and %d more; the job's output has them all (`-o json`).\n", len(ordered)-i)
				break
			}
			verdict := map[string]string{Allowed: "✅ allowed", Denied: "❌ denied"}[x.verdict]
			reasons := make([]string, len(x.reasons))
			for j, reason := range x.reasons {
				reasons[j] = markdownText(reason)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", markdownCode(x.statefulSet), markdownCode(x.claim), markdownText(x.from), markdownText(x.to), verdict, strings.Join(reasons, "<br>"))
		}
		b.WriteString("\n")
	}
	if cs := costRows(r); len(cs) > 0 {
		sets, total := cs[:len(cs)-1], cs[len(cs)-1]
		b.WriteString("| StatefulSet | Capacity | Monthly cost | Change |\n|---|---|---|---|\n")
		for i, x := range sets {
			if i == markdownMaxRows {
				fmt.Fprintf(&b, "| … and %d more | | | |\n", len(sets)-i)
				break
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", markdownCode(x.statefulSet), x.capacity, x.monthly, x.change)
		}
		fmt.Fprintf(&b, "| **Total** | %s | %s | **%s** |\n\n", total.capacity, total.monthly, total.change)
	}
	if o := notes(r); len(o) > 0 {
		for _, line := range o {
			fmt.Fprintf(&b, "- %s\n", markdownText(line))
		}
		b.WriteString("\n")
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n", plural(len(r.Warnings), "warning"))
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "- %s\n", markdownText(w.String()))
		}
		b.WriteString("\n</details>\n\n")
	}
	fmt.Fprintf(&b, "<sub>Compared with the %s; policy revision %s.</sub>\n", map[string]string{ModeBase: "base manifests", ModeCluster: "live cluster"}[r.Mode], markdownCode(shortRevision(r.PolicyRevision)))
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func shortRevision(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
