package rollout

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

func TestAnnotationsAllowed(t *testing.T) {
	org := []AnnotationRule{{Namespace: "team-a", RepositoryPrefixes: []string{"https://git.example/org"}}}
	for _, c := range []struct {
		name       string
		rules      []AnnotationRule
		namespace  string
		repository string
		want       bool
		why        string
	}{
		{"no rules: off by default", nil, "team-a", "https://git.example/org/apps", false, "does not include the repository https://git.example/org/apps for namespace team-a"},
		{"rule with no prefix", []AnnotationRule{{Namespace: "team-a"}}, "team-a", "https://git.example/org/apps", false, "allow-list"},
		{"below the prefix", org, "team-a", "https://git.example/org/apps", true, ""},
		{"below, with .git", org, "team-a", "https://git.example/org/apps.git", true, ""},
		{"deeper below", org, "team-a", "https://git.example/org/sub/apps", true, ""},
		{"the prefix itself", org, "team-a", "https://git.example/org", true, ""},
		{"sibling sharing the prefix's characters", org, "team-a", "https://git.example/org-evil/x", false, "org-evil/x"},
		{"parent of the prefix", org, "team-a", "https://git.example/other/apps", false, "allow-list"},
		{"other namespace", org, "team-b", "https://git.example/org/apps", false, "namespace team-b"},
		{"every namespace", []AnnotationRule{{Namespace: "*", RepositoryPrefixes: []string{"https://git.example/org"}}}, "team-b", "https://git.example/org/apps", true, ""},
		{"second prefix of the rule", []AnnotationRule{{Namespace: "team-a", RepositoryPrefixes: []string{"https://git.example/x", "https://git.example/org/"}}}, "team-a", "https://git.example/org/apps", true, ""},
		{"other host", org, "team-a", "https://git.example.evil/org/apps", false, "allow-list"},
		{"host in capitals", org, "team-a", "https://GIT.example/org/apps", true, ""},
		{"path in other case", org, "team-a", "https://git.example/ORG/apps", false, "allow-list"},
		{"userinfo dropped, not shown", org, "team-a", "https://x-access-token:secret@git.example/org/apps", true, ""},
		{"userinfo of another host", org, "team-a", "https://git.example@evil.example/org/apps", false, "https://evil.example/org/apps"},
		{"scp-like form", org, "team-a", "git@git.example:org/apps.git", true, ""},
		{"ssh form", org, "team-a", "ssh://git@git.example/org/apps.git", true, ""},
		{"ssh with the default port", org, "team-a", "ssh://git@git.example:22/org/apps.git", true, ""},
		{"other port", org, "team-a", "ssh://git@git.example:2222/org/apps.git", false, "allow-list"},
		{"scp-like prefix", []AnnotationRule{{Namespace: "team-a", RepositoryPrefixes: []string{"git@git.example:org"}}}, "team-a", "https://git.example/org/apps", true, ""},
		{"query and fragment dropped", org, "team-a", "https://git.example/org/apps?x=1#y", true, ""},
		{"dot-dot climbing out of the prefix", org, "team-a", "https://git.example/org/../other/apps", false, "not a Git repository URL"},
		{"encoded slash", org, "team-a", "https://git.example/org%2F..%2Fother/apps", false, "not a Git repository URL"},
		{"git scheme: no status goes there", org, "team-a", "git://git.example/org/apps", false, "not a Git repository URL"},
		{"unparseable, redacted", org, "team-a", "https://tok?en@git.example/org/apps", false, "<redacted"},
		{"revision without repository", org, "team-a", "", false, "claimwarden.dev/revision is set without claimwarden.dev/repository"},
		{"whole host", []AnnotationRule{{Namespace: "team-a", RepositoryPrefixes: []string{"https://git.example/"}}}, "team-a", "git@git.example:any/apps", true, ""},
	} {
		got, why := annotationsAllowed(c.rules, c.namespace, c.repository)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: annotationsAllowed(%q, %q) = %v, %q; want %v, containing %q", c.name, c.namespace, c.repository, got, why, c.want, c.why)
		}
		if strings.Contains(why, "secret") {
			t.Errorf("%s: the reason %q shows user information", c.name, why)
		}
	}
}

// TestLocateAgreesWithCommitStatuses: what the allow-list matches is where
// integrations/commitstatus posts, for every URL it posts to (both read it with
// proposal.LocateRepository; this holds them to it).
func TestLocateAgreesWithCommitStatuses(t *testing.T) {
	for _, raw := range []string{
		"https://github.com/org/apps",
		"https://x-access-token:t@GitHub.com:443/org/apps.git/",
		"http://git.example:8080/group/sub/apps",
		"ssh://git@git.example:22/org/apps.git",
		"ssh://git@git.example:2222/org/apps.git",
		"git@git.example:org/apps.git",
		"user:pw@git.example:org/apps",
		"https://[2001:db8::1]:8443/org/apps",
		"[2001:db8::1]:org/apps",
		"https://git.example/org%20x/apps",
	} {
		repo, err := githost.ParseRepositoryURL(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		l, err := proposal.LocateRepository(raw)
		if err != nil || l.Host != repo.Host || strings.Join(l.Path, "/") != repo.Path {
			t.Errorf("LocateRepository(%q) = %+v, %v; commit statuses go to %s/%s", raw, l, err, repo.Host, repo.Path)
		}
	}
}

// TestWorkloadAnnotationsSaysOnce: each ignored value is said once per
// StatefulSet; a new value, or one ignored again after being allowed, is
// said again.
func TestWorkloadAnnotationsSaysOnce(t *testing.T) {
	w := NewWorkloadAnnotations(nil)
	a, b := types.NamespacedName{Namespace: "t", Name: "a"}, types.NamespacedName{Namespace: "t", Name: "b"}
	for i, step := range []struct {
		key   types.NamespacedName
		value string
		allow bool
		want  bool
	}{
		{key: a, value: "r1", want: true},
		{key: a, value: "r1", want: false},
		{key: b, value: "r1", want: true},
		{key: a, value: "r2", want: true},
		{key: a, allow: true},
		{key: a, value: "r2", want: true},
	} {
		if step.allow {
			w.allowed(step.key)
			continue
		}
		if got := w.firstTold(step.key, step.value); got != step.want {
			t.Errorf("step %d: firstTold(%s, %q) = %v, want %v", i, step.key, step.value, got, step.want)
		}
	}
	var none *WorkloadAnnotations
	first := none.firstTold(a, "r1")
	if second := none.firstTold(a, "r1"); !first || !second || none.rulesOrNone() != nil {
		t.Error("a nil allow-list remembers, or allows, something")
	}
}
