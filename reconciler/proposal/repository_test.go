package proposal

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestCanonicalRepositoryURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"https://github.com/o/r.git", "https://github.com/o/r.git"},
		{"  https://GitHub.com/o/r\n", "https://github.com/o/r"},
		{"https://x-access-token:SECRET@github.com/o/r.git", "https://github.com/o/r.git"},
		{"https://SECRET@github.com/o/r", "https://github.com/o/r"},
		{"https://user:SECRET%40x@github.com/o/r", "https://github.com/o/r"},
		{"https://user:p@SECRET@github.com/o/r", "https://github.com/o/r"},
		{"https://github.com/o/r?access_token=SECRET#SECRET", "https://github.com/o/r"},
		{"https://github.com:8443/o/r", "https://github.com:8443/o/r"},
		{"http://git.example.com/o/r", "http://git.example.com/o/r"},
		{"ssh://git:SECRET@github.com:22/o/r.git", "ssh://github.com:22/o/r.git"},
		{"ssh://git@[2001:DB8::1]:2222/o/r.git", "ssh://[2001:db8::1]:2222/o/r.git"},
		{"git@github.com:o/r.git", "github.com:o/r.git"},
		{"git:SECRET@github.com:o/r", "github.com:o/r"},
		{"user:p@SECRET@github.com:o/r", "github.com:o/r"},
		{"github.com:o/r", "github.com:o/r"},
		{"git:SECRET@[2001:db8::1]:o/r", "[2001:db8::1]:o/r"},
		{"git@github.com:o/r?SECRET", "github.com:o/r"},
	} {
		got, err := CanonicalRepositoryURL(tc.in)
		if err != nil {
			t.Errorf("CanonicalRepositoryURL(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("CanonicalRepositoryURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again, _ := CanonicalRepositoryURL(got); again != got {
			t.Errorf("CanonicalRepositoryURL(%q) = %q, not canonical", got, again)
		}
	}
}

// What cannot be split into host and path without guessing fails, and
// RepositoryURL replaces it: never passed through, never quoted.
func TestCanonicalRepositoryURLFailsClosed(t *testing.T) {
	for _, in := range []string{
		"https://a#SECRET@github.com/o/r",
		"https://a?SECRET@github.com/o/r",
		"https://github.com%40SECRET/o/r",
		"https://SECRET@/o/r",
		"https://github.com:SECRET/o/r",
		"https://git hub.com:SECRET@x/o/r",
		"https://github.com\x00SECRET/o/r",
		"ftp://SECRET@github.com/o/r",
		"file:///SECRET/r.git",
		"git@[SECRET:o/r",
		"git@[1.2.3.4]:o/r",
		"SECRET@git%40hub.com:o/r",
		"/srv/SECRET/r.git",
		"SECRET",
		"https://github.com/" + strings.Repeat("SECRET", 400),
	} {
		got, err := CanonicalRepositoryURL(in)
		if err == nil {
			t.Errorf("CanonicalRepositoryURL(%q) = %q, want an error", in, got)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("CanonicalRepositoryURL(%q) error %q quotes the input", in, err)
		}
		if got := RepositoryURL(in); got != RedactedRepository {
			t.Errorf("RepositoryURL(%q) = %q, want %q", in, got, RedactedRepository)
		}
	}
}

// Whatever a source hands the store, the stored Source carries no user
// information: it becomes status.proposal.source and the policy input.
func TestStoreStripsUserInformation(t *testing.T) {
	ctx := context.Background()
	s := NewStore()
	for _, repo := range []string{"https://x-access-token:SECRET@github.com/o/r.git", "git:SECRET@github.com:o/r", "https://a#SECRET@github.com/o/r"} {
		p := proposalOf("shop", "db", "apps", "r1")
		p.Source.Repository = repo
		s.Set(ctx, p)
		got, _ := s.Get(types.NamespacedName{Namespace: "shop", Name: "db"})
		if strings.Contains(got.Source.Repository, "SECRET") || got.Source.Repository == "" {
			t.Errorf("Set with repository %q stored %q", repo, got.Source.Repository)
		}
	}
	drain(s)
}
