package check

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report"
	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// informationURI is where SARIF viewers link the tool to.
const informationURI = "https://github.com/claimwarden/claimwarden"

// sarifReport is r as a SARIF 2.1.0 log (GitHub code scanning, GitLab,
// Azure DevOps): one run, a rule per policy that denied or warned, a
// result per denial (error) and warning, on the proposal's file and line
// relative to the repository root (%SRCROOT%). A finding without a file
// (stdin) is on no location, which GitHub's upload refuses: give check
// files.
func sarifReport(r *Report, version string) *sarif.Report {
	run := sarif.NewRunWithInformationURI("claimwarden", informationURI)
	run.Tool.Driver.WithVersion(version).WithSemanticVersion(strings.TrimPrefix(version, "v"))
	run.Results = []*sarif.Result{}
	for _, f := range findings(r) {
		if run.GetRuleIndex(f.rule) < 0 {
			rule := run.AddRule(f.rule).WithName(f.rule)
			rule.WithShortDescription(sarif.NewMultiformatMessageString().WithText(ruleDescription(f.rule)))
		}
		res := run.CreateResultForRule(f.rule).WithLevel(f.level).WithMessage(sarif.NewTextMessage(f.title + ": " + f.message))
		if f.file != "" {
			// A URI reference: a path's spaces and % are escaped.
			uri := (&url.URL{Path: filepath.ToSlash(filepath.Clean(f.file))}).String()
			loc := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(uri).WithURIBaseID("%SRCROOT%"))
			if f.line > 0 {
				loc.WithRegion(sarif.NewRegion().WithStartLine(f.line))
			}
			res.AddLocation(sarif.NewLocationWithPhysicalLocation(loc))
		}
	}
	rep := report.NewV210Report()
	rep.AddRun(run)
	return rep
}

// ruleDescription describes a rule: the policy's, or the input's.
func ruleDescription(rule string) string {
	if rule == inputRule {
		return "claimwarden check's remarks on the proposed manifests"
	}
	return "claimwarden policy " + rule
}

func writeSARIF(w io.Writer, r *Report, version string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifReport(r, version))
}
