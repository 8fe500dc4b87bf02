package proposal

import "strings"

// ParseRevision returns the Git commit SHA a source revision names, in
// lower case, and false when it names none: then no status is posted, since
// a status can only be attached to a commit.
//
// Accepted, as Flux and plain Git write them:
//
//	main@sha1:<40 hex>              Flux GitRepository (v2 form)
//	refs/heads/main@sha1:<40 hex>   Flux, a ref other than a branch name
//	sha1:<40 hex>                   Flux, a checkout of a bare commit
//	main/<40 hex>                   Flux before v2 (legacy "<branch>/<sha>")
//	<40 hex>                        a bare SHA-1 commit ID
//	<64 hex>                        a bare SHA-256 commit ID (Git's sha256 object format)
//
// Refused (false):
//
//	sha256:<digest>, <tag>@sha256:<digest>
//	    Flux writes these for OCIRepository and Bucket artifacts: they are
//	    content digests, not commits, and "v1@sha256:…" cannot be told
//	    apart from a branch in a SHA-256 Git repository, so the algorithm
//	    prefix sha256 is never taken for a commit.
//	abbreviated SHAs, e.g. sha1:abc1234 or a Helm chart's 1.2.3+abc1234
//	    the status APIs want the full commit ID, and a prefix could be
//	    ambiguous.
//	anything else ("main", "", "1.2.3").
func ParseRevision(rev string) (sha string, ok bool) {
	rev = strings.TrimSpace(rev)
	if rev == "" {
		return "", false
	}
	// "<ref>@<algo>:<hex>": Flux puts the digest after the last "@" (a ref
	// name cannot hold "@{", but may hold "@", so the last one is the
	// separator).
	digest := rev
	if at := strings.LastIndex(rev, "@"); at >= 0 {
		digest = rev[at+1:]
	}
	if algo, hex, found := strings.Cut(digest, ":"); found {
		if strings.EqualFold(algo, "sha1") && isHex(hex, 40) {
			return strings.ToLower(hex), true
		}
		return "", false
	}
	if digest != rev {
		// "<ref>@<something without an algorithm>": not a form Flux writes.
		return "", false
	}
	if isHex(rev, 40) || isHex(rev, 64) {
		return strings.ToLower(rev), true
	}
	// Flux v1 and early v2 wrote "<branch>/<sha>".
	if slash := strings.LastIndex(rev, "/"); slash > 0 && isHex(rev[slash+1:], 40) {
		return strings.ToLower(rev[slash+1:]), true
	}
	return "", false
}

// isHex reports whether s is exactly n hexadecimal digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ShortRevision shortens a commit to 12 characters for people; a revision
// that names no commit is kept as it is.
func ShortRevision(rev string) string {
	if sha, ok := ParseRevision(rev); ok && len(sha) > 12 {
		return sha[:12]
	}
	return rev
}
