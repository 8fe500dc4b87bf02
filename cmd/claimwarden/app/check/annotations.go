package check

import (
	"fmt"
	"io"
	"strings"
)

// writeGitHub writes r as GitHub Actions workflow commands: an ::error
// per denial and a ::warning per warning, on the proposal's file and line
// (the pull request's diff shows them there), then the headline as a
// ::notice. GitHub shows 10 of each level per step and drops the rest,
// so denials come first. Hand-written: the format is three escapes, and no Go library
// for it is in the module proxy.
func writeGitHub(w io.Writer, r *Report) error {
	fs := findings(r)
	var b strings.Builder
	for _, level := range []string{levelError, levelWarning} {
		for _, f := range fs {
			if f.level != level {
				continue
			}
			props := []string{}
			if f.file != "" {
				props = append(props, "file="+escapeProperty(f.file))
				if f.line > 0 {
					props = append(props, fmt.Sprintf("line=%d", f.line))
				}
			}
			props = append(props, "title="+escapeProperty(f.title))
			fmt.Fprintf(&b, "::%s %s::%s\n", level, strings.Join(props, ","), escapeData(f.message))
		}
	}
	fmt.Fprintf(&b, "::notice title=claimwarden check::%s\n", escapeData(headline(r)))
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeData escapes a workflow command's message: a line break would end
// the command, and what follows could be a command of its own (a
// tenant's message must not be).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value, which ends
// at a comma and whose name ends at a colon.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
