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
	{module + "/integrations/flux/...", []string{"/integrations/gitstatus", "/integrations/prcomment", "/integrations/argocd", "/integrations/helm", "/policies"}, "a source knows nothing of Git hosts, policies or other sources"},
	{module + "/integrations/argocd/...", []string{"/integrations/gitstatus", "/integrations/prcomment", "/integrations/flux", "/integrations/helm", "/policies"}, "a source knows nothing of Git hosts, policies or other sources"},
	{module + "/integrations/helm/...", []string{"/integrations/gitstatus", "/integrations/prcomment", "/integrations/flux", "/integrations/argocd", "/policies"}, "a source knows nothing of Git hosts, policies or other sources"},
	{module + "/integrations/toolkit/...", []string{"/integrations/flux", "/integrations/helm", "/integrations/argocd", "/integrations/autoresize", "/integrations/gitstatus", "/policies"}, "what Flux's two tools share knows neither tool, nor Git hosts or policies"},
	{module + "/integrations/autoresize/...", []string{"/integrations/flux", "/integrations/helm", "/integrations/argocd", "/cmd/"}, "autoresize asks the GitOps tools through the core's interfaces (source.Registry): a tool is one folder, nothing in autoresize names it"},
	{module + "/integrations/gitstatus/...", []string{"/integrations/flux", "/integrations/argocd", "/integrations/helm", "/policies"}, "a sink knows nothing of sources or policies"},
	{module + "/integrations/sandbox/...", []string{"/reconciler/", "/policies", "/api/", "/cmd/", "/test/", "/integrations/argocd", "/integrations/autoresize", "/integrations/flux", "/integrations/gitedit", "/integrations/gitstatus", "/integrations/helm", "/integrations/manifests", "/integrations/prcomment", "/integrations/pullrequest", "/integrations/usage"}, "the sandbox runs jobs and knows nothing of what they are: every binary that starts one is its child too"},
	{module + "/integrations/gitedit/...", []string{"/reconciler/", "/policies", "/cmd/", "/integrations/autoresize", "/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/gitstatus", "/integrations/pullrequest"}, "editing a file and rendering a chart know nothing of who asks, nor of Git hosts"},
	{module + "/integrations/manifests/...", []string{"/reconciler/rollout", "/integrations/flux", "/integrations/argocd", "/integrations/helm", "/integrations/gitstatus", "/policies"}, "decoding manifests serves sources and check alike"},
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
