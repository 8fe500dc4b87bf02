package proposal

import (
	"strings"
	"testing"
)

// userInfoSeeds are URLs with credentials in every place the parsers
// disagree on; each fuzz target below starts from them.
var userInfoSeeds = []string{
	"https://x-access-token:T0KEN@GitHub.com/o/r.git?x=T#f",
	"git:T0KEN@github.com:o/r",
	"ssh://git@[2001:db8::1]:2222/o/r",
	"https://a#b@host/o/r",
	"https://a?b@host/o/r",
	"user:pass@host:path/x",
	"https://host/o/r",
	"tok@evil://host/o/r",
	"[::1]:o/r",
	"",
}

// credential makes a fuzzed string a credential no message or scheme
// could hold by chance ("a" is in "not a valid URL").
func credential(s string) string { return "Zq9" + s }

// FuzzRedactURL: the user information RedactURL finds (the rule Git's
// credential code follows) is gone from its output, and redacting again
// changes nothing.
func FuzzRedactURL(f *testing.F) {
	for _, s := range userInfoSeeds {
		f.Add(s, "T0KEN")
	}
	f.Fuzz(func(t *testing.T, rest, secret string) {
		out := RedactURL(rest)
		if again := RedactURL(out); again != out {
			t.Fatalf("RedactURL(%q) = %q, redacted again %q", rest, out, again)
		}
		// A credential placed before the host, in the URL and scp-like forms.
		secret = credential(secret)
		if strings.ContainsAny(secret, "/@") || strings.Contains(rest, secret) {
			return
		}
		for _, prefix := range []string{"https://", "ssh://", ""} {
			s := prefix + secret + "@" + rest
			if got := RedactURL(s); strings.Contains(got, secret) {
				t.Fatalf("RedactURL(%q) = %q: the user information %q is left", s, got, secret)
			}
		}
	})
}

// FuzzCanonicalRepositoryURL: a canonical URL holds no user information,
// query or fragment, is its own canonical form, and a credential placed
// before the host never survives, nor appears in the error.
func FuzzCanonicalRepositoryURL(f *testing.F) {
	for _, s := range userInfoSeeds {
		f.Add(s, "T0KEN")
	}
	f.Fuzz(func(t *testing.T, raw, secret string) {
		out, err := CanonicalRepositoryURL(raw)
		if err != nil {
			if got := RepositoryURL(raw); got != RedactedRepository {
				t.Fatalf("RepositoryURL(%q) = %q, want %q: the canonical form failed with %v", raw, got, RedactedRepository, err)
			}
			return
		}
		if RedactURL(out) != out {
			t.Fatalf("CanonicalRepositoryURL(%q) = %q holds user information", raw, out)
		}
		if again, err := CanonicalRepositoryURL(out); err != nil || again != out {
			t.Fatalf("CanonicalRepositoryURL(%q) = %q, which canonicalises to %q, %v", raw, out, again, err)
		}
		if RepositoryURL(raw) != out {
			t.Fatalf("RepositoryURL(%q) = %q, CanonicalRepositoryURL %q", raw, RepositoryURL(raw), out)
		}
		secret = credential(secret)
		if strings.ContainsAny(secret, "/@") || strings.Contains(raw, secret) {
			return
		}
		for _, prefix := range []string{"https://", "ssh://", ""} {
			s := prefix + secret + "@" + raw
			got, err := CanonicalRepositoryURL(s)
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Fatalf("CanonicalRepositoryURL(%q) error %q quotes the user information", s, err)
			}
			if err == nil && strings.Contains(got, secret) {
				t.Fatalf("CanonicalRepositoryURL(%q) = %q: the user information %q is left", s, got, secret)
			}
		}
	})
}

// FuzzParseRevision: a revision names a commit only as 40 or 64 lower-case
// hexadecimal digits written in it; ShortRevision shortens exactly those.
func FuzzParseRevision(f *testing.F) {
	const sha = "0123456789abcdef0123456789ABCDEF01234567"
	for _, s := range []string{
		"main@sha1:" + sha, "refs/heads/main@sha1:" + sha, "sha1:" + sha, "main/" + sha, sha,
		sha + sha[:24], "sha256:" + sha + sha[:24], "v1@sha256:" + sha, "sha1:abc1234", "1.2.3+abc1234", "main", "", "@", ":", "/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rev string) {
		got, ok := ParseRevision(rev)
		short := ShortRevision(rev)
		if !ok {
			if got != "" || short != rev {
				t.Fatalf("ParseRevision(%q) = %q, false; ShortRevision %q", rev, got, short)
			}
			return
		}
		if (len(got) != 40 && len(got) != 64) || strings.Trim(got, "0123456789abcdef") != "" {
			t.Fatalf("ParseRevision(%q) = %q, not a lower-case commit ID", rev, got)
		}
		if !strings.HasSuffix(strings.ToLower(strings.TrimSpace(rev)), got) {
			t.Fatalf("ParseRevision(%q) = %q, which the revision does not end with", rev, got)
		}
		if short != got[:12] {
			t.Fatalf("ShortRevision(%q) = %q, want %q", rev, short, got[:12])
		}
	})
}
