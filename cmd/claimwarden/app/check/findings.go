package check

import (
	"fmt"
	"strings"

	"github.com/claimwarden/claimwarden/policies"
)

// Levels of a finding, as SARIF names them (GitHub's annotations and
// JUnit map them).
const (
	levelError   = "error"
	levelWarning = "warning"
)

// inputRule names the findings that are about the input, not a policy's.
const inputRule = "claimwarden-input"

// finding is one denial or warning where CI shows findings: on the line
// of the file that proposes the StatefulSet.
type finding struct {
	// file is where the proposal writes the StatefulSet ("" when it has
	// no file: stdin); a kustomize build's findings are on its directory.
	// line is 0 when unknown (a build's output has none).
	file string
	line int
	// level is levelError (a denial) or levelWarning.
	level string
	// rule is the policy, or inputRule.
	rule string
	// title names what the finding is about; message is the policy's.
	// Both are a pull request's to choose: control and bidirectional
	// formatting characters are shown as escapes (terminalText), so
	// that no viewer, log or parser takes them for more than text.
	title, message string
}

// findings are the report's denials and warnings, the input's warnings
// last, in the report's order (StatefulSets by namespace and name).
func findings(r *Report) []finding {
	var out []finding
	for _, st := range r.StatefulSets {
		if st.Status != StatusChanged {
			continue
		}
		file := findingFile(st.File)
		add := func(subject string, reasons []policies.Reason, level, verb string) {
			for _, reason := range reasons {
				out = append(out, finding{file: file, line: st.Line, level: level, rule: reason.Policy,
					title:   terminalText(fmt.Sprintf("%s/%s: %s %s by %s", st.Namespace, st.Name, subject, verb, reason.Policy)),
					message: terminalText(reason.Message)})
			}
		}
		for _, c := range st.Claims {
			subject := fmt.Sprintf("claim %s %s → %s", c.Name, c.From, c.To)
			add(subject, c.Denials, levelError, "denied")
			add(subject, c.Warnings, levelWarning, "warned")
		}
		if t := st.Templates; t != nil {
			add("templates", t.Denials, levelError, "denied")
			add("templates", t.Warnings, levelWarning, "warned")
		}
	}
	for _, w := range r.Warnings {
		out = append(out, finding{file: findingFile(w.File), line: w.Line, level: levelWarning, rule: inputRule,
			title: "claimwarden check: input", message: terminalText(w.Message)})
	}
	return out
}

// findingFile is the path a finding is shown on for a StatefulSet's
// File: a kustomize build's directory; none for stdin.
func findingFile(file string) string {
	if dir, ok := strings.CutPrefix(file, "kustomize build "); ok {
		return dir
	}
	if file == "stdin" {
		return ""
	}
	return file
}
