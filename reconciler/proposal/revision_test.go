package proposal

import (
	"strings"
	"testing"
)

func TestParseRevision(t *testing.T) {
	sha1 := "0123456789abcdef0123456789abcdef01234567"
	sha256 := strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct {
		rev, want string
		ok        bool
	}{
		{"main@sha1:" + sha1, sha1, true},
		{"refs/heads/main@sha1:" + sha1, sha1, true},
		{"refs/tags/v1.2.3@sha1:" + sha1, sha1, true},
		{"feature/x@y@sha1:" + sha1, sha1, true}, // "@" in a branch name: the last one separates
		{"sha1:" + sha1, sha1, true},
		{"main@SHA1:" + strings.ToUpper(sha1), sha1, true}, // normalised to lower case
		{sha1, sha1, true},
		{" " + sha1 + "\n", sha1, true},
		{"main/" + sha1, sha1, true}, // Flux's legacy <branch>/<sha>
		{sha256, sha256, true},       // a bare SHA-256 Git object ID
		// OCI and Bucket digests are not commits.
		{"sha256:" + sha256, "", false},
		{"v1.0.0@sha256:" + sha256, "", false},
		{"main@sha256:" + sha256, "", false},
		{"latest@sha256:" + sha256, "", false},
		// Abbreviated or malformed.
		{"sha1:0123456", "", false},
		{"main@sha1:" + sha1[:39], "", false},
		{"main@sha1:" + sha1 + "0", "", false},
		{"main@sha1:" + sha1[:39] + "g", "", false},
		{"sha1:" + sha256, "", false},
		{"main@" + sha1, "", false}, // no algorithm: not a form Flux writes
		{"1.2.3+0123456789ab", "", false},
		{"main", "", false},
		{"", "", false},
		{"md5:" + sha1, "", false},
		{sha1[:39], "", false},
	} {
		got, ok := ParseRevision(tc.rev)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRevision(%q) = %q, %v; want %q, %v", tc.rev, got, ok, tc.want, tc.ok)
		}
	}
}
