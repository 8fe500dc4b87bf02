package docs_test

import (
	"strings"
	"testing"
	"unicode"
)

// githubSlug is the anchor GitHub gives a heading: lower case, letters,
// digits, '-' and '_' kept, spaces made '-', everything else dropped.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Anchors GitHub rendered for headings of this repository's pages.
func TestGithubSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"When Kubernetes does it itself (KEP-4650)":        "when-kubernetes-does-it-itself-kep-4650",
		"claimwarden check: the verdicts before the merge": "claimwarden-check-the-verdicts-before-the-merge",
		"❌ claimwarden check: denied":                      "-claimwarden-check-denied",
		"Gitea Actions (and Forgejo)":                      "gitea-actions-and-forgejo",
		"input.server":                                     "inputserver",
		"Flux HelmReleases":                                "flux-helmreleases",
	} {
		if got := githubSlug(heading); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", heading, got, want)
		}
	}
}
