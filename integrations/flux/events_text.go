package flux

// maxDescription is the longest description an event carries: 140
// characters, a commit status's limit on GitHub, to which the rollout's
// messages have always been shortened for Flux too, so that what Flux's
// Providers show matches the commit status claimwarden posts. The cut is
// written here rather than taken from the commit-status sink: a source
// integration does not depend on a Git host package.
const maxDescription = 140

// shortDescription cuts s to maxDescription characters (runes, not bytes: a
// cut inside a UTF-8 sequence would make the JSON invalid), ending a cut one
// with "…" so that readers see it was cut.
func shortDescription(s string) string {
	r := []rune(s)
	if len(r) <= maxDescription {
		return s
	}
	return string(r[:maxDescription-1]) + "…"
}
