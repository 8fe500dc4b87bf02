package reconciler_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/claimwarden/claimwarden"

// rules say, per package pattern, which of the project's packages its
// non-test code may not depend on, directly or not (docs/architecture.md).
var rules = []struct {
	pattern   string
	forbidden []string
	why       string
}{
	{module + "/reconciler/...", []string{"/integrations/", "/cmd/", "/test/"}, "the core imports no integration: sources publish proposals to it, sinks read its outcomes"},
	{module + "/policies/...", []string{"/reconciler/", "/integrations/", "/cmd/", "/test/"}, "the policy engine answers questions and knows nothing of who asks"},
	{module + "/api/...", []string{"/reconciler/", "/integrations/", "/policies/", "/cmd/", "/test/"}, "the API types stand alone"},
	{module + "/integrations/flux/...", []string{"/integrations/argocd", "/integrations/helm", "/integrations/autoresize", "/integrations/githost", "/integrations/commitstatus", "/integrations/pullrequest", "/integrations/prcomment", "/integrations/gitedit", "/integrations/usage", "/policies", "/cmd/"}, "a tool knows nothing of the other tools, Git hosts, autoresize or policies: it is one folder"},
	{module + "/integrations/argocd/...", []string{"/integrations/flux", "/integrations/helm", "/integrations/toolkit", "/integrations/autoresize", "/integrations/githost", "/integrations/commitstatus", "/integrations/pullrequest", "/integrations/prcomment", "/integrations/gitedit", "/integrations/usage", "/policies", "/cmd/"}, "a tool knows nothing of the other tools, Git hosts, autoresize or policies: it is one folder"},
	{module + "/integrations/helm/...", []string{"/integrations/flux", "/integrations/argocd", "/integrations/autoresize", "/integrations/githost", "/integrations/commitstatus", "/integrations/pullrequest", "/integrations/prcomment", "/integrations/gitedit", "/integrations/usage", "/policies", "/cmd/"}, "a tool knows nothing of the other tools, Git hosts, autoresize or policies: it is one folder"},
	{module + "/integrations/toolkit/...", []string{"/integrations/flux", "/integrations/helm", "/integrations/argocd", "/integrations/autoresize", "/integrations/githost", "/integrations/commitstatus", "/integrations/pullrequest", "/policies", "/cmd/"}, "what Flux's two tools share knows neither tool, nor Git hosts or policies"},
	{module + "/integrations/autoresize/...", []string{"/integrations/flux", "/integrations/helm", "/integrations/argocd", "/integrations/toolkit", "/integrations/prcomment", "/cmd/"}, "autoresize asks the GitOps tools through the core's interfaces (source.Registry): a tool is one folder, nothing in autoresize names it"},
	{module + "/integrations/githost/...", []string{"/integrations/commitstatus", "/integrations/pullrequest", "/integrations/prcomment", "/integrations/autoresize", "/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/toolkit", "/policies", "/cmd/", "/reconciler/rollout", "/reconciler/source", "/reconciler/assess", "/reconciler/authority", "/reconciler/converge", "/reconciler/gate", "/reconciler/plan"}, "the Git-host layer knows nothing of who uses it; of the core it reads only the vocabulary (proposal's repository URLs, outcome's bounded text)"},
	{module + "/integrations/spokes/...", []string{"/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/toolkit", "/integrations/autoresize", "/integrations/githost", "/integrations/commitstatus", "/integrations/pullrequest", "/integrations/prcomment", "/integrations/gitedit", "/integrations/manifests", "/integrations/usage", "/integrations/sandbox", "/policies", "/cmd/", "/reconciler/rollout", "/reconciler/source", "/reconciler/assess", "/reconciler/authority", "/reconciler/converge", "/reconciler/gate", "/reconciler/plan"}, "the list of spokes and their credentials knows nothing of who uses a spoke, nor of the tools whose Secrets it reads: a tool's format is parsed in the tool's folder and handed in"},
	{module + "/integrations/commitstatus/...", []string{"/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/toolkit", "/integrations/autoresize", "/integrations/pullrequest", "/integrations/prcomment", "/policies", "/reconciler/rollout", "/cmd/"}, "a sink knows nothing of sources, policies or the rollout that publishes outcomes (it records through an interface)"},
	{module + "/integrations/policyreport/...", []string{"/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/toolkit", "/integrations/autoresize", "/integrations/githost", "/integrations/commitstatus", "/integrations/pullrequest", "/integrations/prcomment", "/integrations/gitedit", "/integrations/usage", "/integrations/sandbox", "/policies", "/reconciler/rollout", "/reconciler/source", "/reconciler/assess", "/reconciler/gate", "/reconciler/plan", "/cmd/"}, "a sink knows nothing of sources, policies or the rollout that publishes outcomes: the report says what the outcome says"},
	{module + "/integrations/pullrequest/...", []string{"/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/toolkit", "/integrations/autoresize", "/integrations/commitstatus", "/integrations/prcomment", "/policies", "/cmd/", "/reconciler/rollout", "/reconciler/source", "/reconciler/assess", "/reconciler/authority", "/reconciler/converge", "/reconciler/gate", "/reconciler/plan"}, "pull requests through a Git host's API know nothing of what they propose; of the core they read only the vocabulary, as the Git-host layer does"},
	{module + "/integrations/prcomment/...", []string{"/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/toolkit", "/integrations/autoresize", "/integrations/commitstatus", "/integrations/pullrequest", "/policies", "/cmd/", "/reconciler/rollout", "/reconciler/source", "/reconciler/assess", "/reconciler/authority", "/reconciler/converge", "/reconciler/gate", "/reconciler/plan"}, "a pull request's comment knows nothing of what it says; of the core it reads only the vocabulary, as the Git-host layer does"},
	{module + "/integrations/usage/...", []string{"/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/toolkit", "/integrations/autoresize", "/integrations/githost", "/integrations/commitstatus", "/integrations/pullrequest", "/integrations/prcomment", "/integrations/gitedit", "/integrations/sandbox", "/policies", "/reconciler/", "/cmd/"}, "reading volume usage knows nothing of who decides on it"},
	{module + "/integrations/sandbox/...", []string{"/reconciler/", "/policies", "/api/", "/cmd/", "/test/", "/integrations/argocd", "/integrations/autoresize", "/integrations/flux", "/integrations/gitedit", "/integrations/githost", "/integrations/commitstatus", "/integrations/helm", "/integrations/manifests", "/integrations/prcomment", "/integrations/pullrequest", "/integrations/toolkit", "/integrations/usage"}, "the sandbox runs jobs and knows nothing of what they are: every binary that starts one is its child too"},
	{module + "/integrations/gitedit/...", []string{"/reconciler/", "/policies", "/cmd/", "/integrations/autoresize", "/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/toolkit", "/integrations/githost", "/integrations/commitstatus", "/integrations/pullrequest"}, "editing a file and rendering a chart know nothing of who asks, nor of Git hosts"},
	{module + "/integrations/manifests/...", []string{"/reconciler/rollout", "/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/toolkit", "/integrations/autoresize", "/integrations/githost", "/integrations/commitstatus", "/integrations/pullrequest", "/policies", "/cmd/"}, "decoding manifests serves sources and check alike"},
}

// TestImportDirection fails when a package depends on one the architecture
// says it may not: the data flows one way, sources → proposals → core →
// outcomes → sinks.
func TestImportDirection(t *testing.T) {
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", r.pattern).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", r.pattern, err)
		}
		roots, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", r.pattern).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pattern, err)
		}
		if len(strings.Fields(string(roots))) == 0 {
			t.Fatalf("%s matches no package: the rule tests nothing", r.pattern)
		}
		for _, dep := range strings.Fields(string(out)) {
			rest, ok := strings.CutPrefix(dep, module)
			if !ok {
				continue
			}
			for _, f := range r.forbidden {
				if strings.HasPrefix(rest+"/", f) || strings.HasPrefix(rest, f) {
					t.Errorf("%s depends on %s: %s", r.pattern, dep, r.why)
				}
			}
		}
	}
}

// TestEveryIntegrationHasARule fails when a package under integrations/ is
// matched by no rule: a new integration says what it may not import.
func TestEveryIntegrationHasARule(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", module+"/integrations/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		covered := false
		for _, r := range rules {
			if strings.HasPrefix(pkg+"/", strings.TrimSuffix(r.pattern, "...")) {
				covered = true
			}
		}
		if !covered {
			t.Errorf("%s has no layering rule", pkg)
		}
	}
}
