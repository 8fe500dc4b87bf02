package githost

import (
	"strings"
	"testing"
)

// Credentials in the forms an adversarial review found to slip through (see
// proposal.TestRedactURLHostile): a parsed repository names the host the
// credential was for, never the credential.
func TestParseRepositoryURLHostile(t *testing.T) {
	gh := Repository{Host: "github.com", Path: "o/r", Owner: "o", Name: "r"}
	for _, tc := range []struct {
		in   string
		want Repository
	}{
		{"git:SECRET@github.com:o/r", gh},
		{"git:SECRET@github.com:o/r.git", gh},
		{"user:p@SECRET@github.com:o/r", gh},
		{"https://user:SECRET%40x@github.com/o/r?t=SECRET#SECRET", gh},
		{"user:SECRET@[2001:db8::1]:o/r", Repository{Host: "[2001:db8::1]", Path: "o/r", Owner: "o", Name: "r"}},
	} {
		got, err := ParseRepositoryURL(tc.in)
		if err != nil {
			t.Errorf("ParseRepositoryURL(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseRepositoryURL(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	// Ambiguous: a URL parser reads host "a", Git's credential code reads
	// user "a#SECRET" at github.com. Refused, and the error hides both.
	for _, in := range []string{"https://a#SECRET@github.com/o/r", "https://a?SECRET@github.com/o/r"} {
		got, err := ParseRepositoryURL(in)
		if err == nil {
			t.Errorf("ParseRepositoryURL(%q) = %+v, want an error", in, got)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("ParseRepositoryURL(%q) error %q shows the credential", in, err)
		}
	}
	// An encoded "@" in the host: not split where its author meant.
	if got, err := ParseRepositoryURL("https://github.com%40evil.example/o/r"); err == nil {
		t.Errorf("ParseRepositoryURL with %%40 in the host = %+v, want an error", got)
	}
}
