package outcome

import "unicode/utf8"

// MaxDescription is the longest description a rollout's state is shown
// with on a commit: GitHub refuses longer commit-status descriptions (422),
// the other hosts and Flux's Providers show the same short text.
const MaxDescription = 140

// ShortDescription cuts s to MaxDescription characters, as every sink that
// shows a state on a commit does, so that they all show the same text.
func ShortDescription(s string) string {
	return Shorten(s, MaxDescription)
}

// Shorten cuts s to at most n characters (runes, not bytes: a cut inside a
// UTF-8 sequence would make JSON invalid), ending a cut one with "…" so that
// readers see it was cut.
func Shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
