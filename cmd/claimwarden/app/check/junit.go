package check

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/claimwarden/claimwarden/policies"
)

// junitReport is r as JUnit XML (GitLab's test reports, most CI test
// views): a test suite per changed StatefulSet (on its file), a test case
// per claim change and per templates verdict, failed when denied, its
// warnings in its output; new and ignored StatefulSets are skipped
// suites' single case, saying why; the input's warnings are a suite's
// output.
func junitReport(r *Report) junit.Testsuites {
	var out junit.Testsuites
	for _, st := range r.StatefulSets {
		suite := junit.Testsuite{Name: junitText(st.Namespace + "/" + st.Name), File: junitText(findingFile(st.File)), Time: "0"}
		where := junitText(st.File)
		if st.Line > 0 {
			where = fmt.Sprintf("%s:%d", where, st.Line)
		}
		switch st.Status {
		case StatusChanged:
			for _, c := range st.Claims {
				suite.AddTestcase(junitCase(suite.Name, junitText(fmt.Sprintf("claim %s %s → %s", c.Name, c.From, c.To)), where, c.Denials, c.Warnings))
			}
			if t := st.Templates; t != nil {
				suite.AddTestcase(junitCase(suite.Name, "templates", where, t.Denials, t.Warnings))
			}
		case StatusNew, StatusIgnored:
			suite.AddTestcase(junit.Testcase{Name: st.Status, Classname: suite.Name, Time: "0",
				Skipped: &junit.Result{Message: junitText(st.Status + ": " + strings.Join(st.Notes, "; "))}})
		default:
			continue
		}
		out.AddSuite(suite)
	}
	if len(r.Warnings) > 0 {
		var lines []string
		for _, w := range r.Warnings {
			lines = append(lines, junitText(w.String()))
		}
		out.AddSuite(junit.Testsuite{Name: "claimwarden check: input", Time: "0", SystemOut: &junit.Output{Data: strings.Join(lines, "\n")}})
	}
	return out
}

// junitCase is one verdict: failed with every denial when denied; the
// warnings are its output.
func junitCase(suite, name, where string, denials, warnings []policies.Reason) junit.Testcase {
	tc := junit.Testcase{Name: name, Classname: suite, Time: "0"}
	if len(denials) > 0 {
		tc.Failure = &junit.Result{Message: junitText("denied by " + policyNames(denials)), Type: "denied", Data: where + "\n" + junitLines(reasonTexts(denials, ""))}
	}
	if len(warnings) > 0 {
		tc.SystemOut = &junit.Output{Data: junitLines(reasonTexts(warnings, "warning "))}
	}
	return tc
}

// policyNames names the policies of reasons, each once.
func policyNames(reasons []policies.Reason) string {
	var names []string
	for _, r := range reasons {
		if !slices.Contains(names, r.Policy) {
			names = append(names, r.Policy)
		}
	}
	return strings.Join(names, ", ")
}

// junitText is s as XML 1.0 may hold it, in an attribute or CDATA (which
// is not escaped): a pull request's text with a control character, a
// noncharacter or invalid UTF-8 would make the whole report unreadable,
// and hide its failures. Control and bidirectional formatting characters
// are shown as escapes (terminalText).
func junitText(s string) string {
	s = terminalText(strings.ToValidUTF8(s, "\uFFFD"))
	return strings.NewReplacer("\uFFFE", `\ufffe`, "\uFFFF", `\uffff`).Replace(s)
}

// junitLines are lines, each junitText.
func junitLines(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = junitText(l)
	}
	return strings.Join(out, "\n")
}

func writeJUnit(w io.Writer, r *Report) error {
	out := junitReport(r)
	return out.WriteXML(w)
}
