package check

import (
	"bytes"
	"strings"
	"testing"

	junitparser "github.com/joshdk/go-junit"
	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/claimwarden/claimwarden/policies"
)

// findingsReport has what CI annotations show: a denial and a warning on
// a claim, a templates denial, a StatefulSet from a kustomize build (no
// line), an allowed one, a new and an ignored one, a remark on the input;
// a policy message with a line break and a workflow command after it, a
// terminal colour, the end of a CDATA section and a noncharacter, and a
// file name with a comma and a colon, as a tenant may write them.
func findingsReport() *Report {
	evil := "10Gi → 40Gi is +300%\n::add-mask::x \x1b[31m]]>\uffff"
	return &Report{
		Summary: Summary{Verdict: Denied, StatefulSets: 5, Changed: 3, New: 1, Ignored: 1, Claims: 3, Allowed: 1, Denied: 2},
		StatefulSets: []StatefulSet{
			{Namespace: "shop", Name: "big", File: "apps/shop,big:1.yaml", Line: 12, Status: StatusChanged, Verdict: Denied,
				Claims: []Claim{{Name: "data-big-0", From: "10Gi", To: "40Gi", Verdict: Denied,
					Denials:  []policies.Reason{{Policy: "max-step", Message: evil}},
					Warnings: []policies.Reason{{Policy: "cost", Message: "+12.00 a month"}}}},
				Templates: &TemplateVerdict{Verdict: Denied, Denials: []policies.Reason{{Policy: "no-recreate", Message: "templates change"}}}},
			{Namespace: "shop", Name: "built", File: "kustomize build overlays/prod", Status: StatusChanged, Verdict: Denied,
				Claims: []Claim{{Name: "data-built-0", From: "1Gi", To: "2Gi", Verdict: Denied, Denials: []policies.Reason{{Policy: "max-size", Message: "2Gi is too large"}}}}},
			{Namespace: "shop", Name: "small", File: "apps/small.yaml", Line: 1, Status: StatusChanged, Verdict: Allowed,
				Claims: []Claim{{Name: "data-small-0", From: "10Gi", To: "15Gi", Verdict: Allowed}}},
			{Namespace: "shop", Name: "fresh", File: "apps/fresh.yaml", Status: StatusNew, Notes: []string{"claims come from the templates"}},
			{Namespace: "shop", Name: "other", File: "apps/other.yaml", Status: StatusIgnored, Notes: []string{"not managed"}},
		},
		Warnings: []Warning{{File: "apps/x.yaml", Line: 3, Message: "not a Kubernetes object"}},
	}
}

// SARIF: valid against the SARIF 2.1.0 schema (go-sarif's Validate), and
// read back by its parser: a result per denial (error) and warning, on
// the file relative to the repository root and the line; the policy is
// the rule; the message is the policy's, whole.
func TestSARIF(t *testing.T) {
	rep := sarifReport(findingsReport(), "v1.2.3")
	if err := rep.Validate(); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v", err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, findingsReport(), FormatSARIF, WriteOptions{Version: "v1.2.3"}); err != nil {
		t.Fatal(err)
	}
	got, err := sarif.FromBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	run := got.Runs[0]
	if d := run.Tool.Driver; *d.Name != "claimwarden" || *d.Version != "v1.2.3" || len(d.Rules) != 5 {
		t.Errorf("driver %s %s with %d rules, want claimwarden v1.2.3 with 5 (max-step, cost, no-recreate, max-size, input)", *d.Name, *d.Version, len(d.Rules))
	}
	type result struct{ rule, level, uri, message string }
	var results []result
	lines := map[string]int{}
	for _, r := range run.Results {
		res := result{rule: *r.RuleID, level: r.Level, message: *r.Message.Text}
		if len(r.Locations) > 0 {
			loc := r.Locations[0].PhysicalLocation
			res.uri = *loc.ArtifactLocation.URI + " in " + *loc.ArtifactLocation.URIBaseID
			if loc.Region != nil {
				lines[res.rule] = *loc.Region.StartLine
			}
		}
		results = append(results, res)
	}
	want := []result{
		{"max-step", "error", "apps/shop,big:1.yaml in %SRCROOT%", "shop/big: claim data-big-0 10Gi → 40Gi denied by max-step: 10Gi → 40Gi is +300%\\n::add-mask::x \\x1b[31m]]>\uffff"},
		{"cost", "warning", "apps/shop,big:1.yaml in %SRCROOT%", "shop/big: claim data-big-0 10Gi → 40Gi warned by cost: +12.00 a month"},
		{"no-recreate", "error", "apps/shop,big:1.yaml in %SRCROOT%", "shop/big: templates denied by no-recreate: templates change"},
		{"max-size", "error", "overlays/prod in %SRCROOT%", "shop/built: claim data-built-0 1Gi → 2Gi denied by max-size: 2Gi is too large"},
		{inputRule, "warning", "apps/x.yaml in %SRCROOT%", "claimwarden check: input: not a Kubernetes object"},
	}
	if len(results) != len(want) {
		t.Fatalf("results %+v, want %+v", results, want)
	}
	for i := range want {
		if results[i] != want[i] {
			t.Errorf("result %d: %+v, want %+v", i, results[i], want[i])
		}
	}
	if lines["max-step"] != 12 || lines[inputRule] != 3 {
		t.Errorf("lines %v, want max-step on 12 and the input's on 3", lines)
	}
	if _, ok := lines["max-size"]; ok {
		t.Errorf("a kustomize build's finding has a line: %v", lines)
	}

	// The validation bites: a level SARIF does not know is refused.
	bad := sarifReport(findingsReport(), "v1.2.3")
	bad.Runs[0].Results[0].WithLevel("fatal")
	if err := bad.Validate(); err == nil {
		t.Error("a result of level fatal passed the schema")
	}
}

// JUnit: read by a JUnit parser as a CI's test report would: a suite per
// StatefulSet, a case per claim change and templates verdict, failed when
// denied with the policy's words, skipped when new or ignored, the
// warnings as output; the input's remarks as a suite's output.
func TestJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, findingsReport(), FormatJUnit, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	suites, err := junitparser.Ingest(buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	byName := map[string]junitparser.Suite{}
	for _, s := range suites {
		byName[s.Name] = s
	}
	big := byName["shop/big"]
	if big.Totals.Tests != 2 || big.Totals.Failed != 2 || len(big.Tests) != 2 {
		t.Fatalf("shop/big: %+v, want 2 failed cases", big)
	}
	claim := big.Tests[0]
	if claim.Name != "claim data-big-0 10Gi → 40Gi" || claim.Status != junitparser.StatusFailed || claim.Message != "denied by max-step" ||
		!strings.Contains(claim.Error.Error(), "apps/shop,big:1.yaml:12") || !strings.Contains(claim.Error.Error(), `max-step: 10Gi → 40Gi is +300%\n::add-mask::x \x1b[31m]]>\uffff`) ||
		claim.SystemOut != "warning cost: +12.00 a month" {
		t.Errorf("shop/big's claim: %+v (%v)", claim, claim.Error)
	}
	if s := byName["shop/small"]; s.Totals.Tests != 1 || s.Totals.Passed != 1 {
		t.Errorf("shop/small: %+v, want 1 passed case", s.Totals)
	}
	for _, name := range []string{"shop/fresh", "shop/other"} {
		if s := byName[name]; s.Totals.Tests != 1 || s.Totals.Skipped != 1 {
			t.Errorf("%s: %+v, want 1 skipped case", name, s.Totals)
		}
	}
	if s := byName["claimwarden check: input"]; s.SystemOut != "apps/x.yaml:3: not a Kubernetes object" {
		t.Errorf("the input's suite: %+v", s)
	}
	if len(suites) != 6 {
		t.Errorf("%d suites, want 6 (5 StatefulSets and the input)", len(suites))
	}
}

// GitHub Actions: an ::error per denial, then a ::warning per warning, on
// the file and line, then the headline; a message's line break is
// escaped, so a tenant's message cannot start a workflow command of its
// own, nor a file name end a property.
func TestGitHubAnnotations(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, findingsReport(), FormatGitHub, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `::error file=apps/shop%2Cbig%3A1.yaml,line=12,title=shop/big%3A claim data-big-0 10Gi → 40Gi denied by max-step::10Gi → 40Gi is +300%25\n::add-mask::x \x1b[31m]]>NONCHARACTER
::error file=apps/shop%2Cbig%3A1.yaml,line=12,title=shop/big%3A templates denied by no-recreate::templates change
::error file=overlays/prod,title=shop/built%3A claim data-built-0 1Gi → 2Gi denied by max-size::2Gi is too large
::warning file=apps/shop%2Cbig%3A1.yaml,line=12,title=shop/big%3A claim data-big-0 10Gi → 40Gi warned by cost::+12.00 a month
::warning file=apps/x.yaml,line=3,title=claimwarden check%3A input::not a Kubernetes object
::notice title=claimwarden check::denied: 3 StatefulSets change 3 claims (1 allowed, 2 denied); 0 unchanged, 1 new, 1 ignored
`
	want = strings.ReplaceAll(want, "NONCHARACTER", "\uffff")
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if !strings.HasPrefix(line, "::error ") && !strings.HasPrefix(line, "::warning ") && !strings.HasPrefix(line, "::notice ") {
			t.Errorf("a line that is no annotation: %q", line)
		}
	}
}
