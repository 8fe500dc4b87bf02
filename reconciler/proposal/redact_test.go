package proposal

import (
	"strings"
	"testing"
)

// Credentials in the forms an adversarial review found to slip through: a
// "#" or "?" in the user information, a password in the scp-like form, an
// encoded "@". None may be shown.
func TestRedactURLHostile(t *testing.T) {
	for _, in := range []string{
		"https://a#SECRET@github.com/o/r",
		"https://a?SECRET@github.com/o/r",
		"https://user:pa#SECRET@github.com/o/r",
		"https://SECRET%40x@github.com/o/r",
		"git:SECRET@github.com:o/r",
		"user:SECRET@[2001:db8::1]:o/r",
		"ssh://git:SECRET@[2001:db8::1]:22/o/r",
	} {
		if got := RedactURL(in); strings.Contains(got, "SECRET") {
			t.Errorf("RedactURL(%q) = %q: the credential is shown", in, got)
		}
	}
}
