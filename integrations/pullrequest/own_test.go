package pullrequest_test

import (
	"testing"

	"github.com/claimwarden/claimwarden/integrations/pullrequest"
)

func TestSameCommit(t *testing.T) {
	full := "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{full, full, true},
		{full, full[:12], true}, // Bitbucket Cloud's pull requests abbreviate
		{full[:12], "0123456789ABCDEF0123456789ABCDEF01234567", true},
		{full, full[:11], false},
		{full, "1123456789abcdef0123456789abcdef01234567", false},
		{"c2", "c2", true},
		{"", "", false},
		{full, "", false},
	} {
		if got := pullrequest.SameCommit(tc.a, tc.b); got != tc.want {
			t.Errorf("SameCommit(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
