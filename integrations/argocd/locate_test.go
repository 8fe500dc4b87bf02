package argocd

import (
	"errors"
	"testing"

	"github.com/claimwarden/claimwarden/reconciler/source"
)

// An Argo CD targetRevision follows a branch, the default one for HEAD;
// a commit or a tag follows none.
func TestArgoBranch(t *testing.T) {
	for rev, want := range map[string]string{"": source.DefaultBranch, "HEAD": source.DefaultBranch, "main": "main", "refs/heads/prod": "prod", "release/1.x": "release/1.x"} {
		if got, err := argoBranch(rev); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", rev, got, err, want)
		}
	}
	for _, rev := range []string{"0123456789abcdef0123456789abcdef01234567", "refs/tags/v1"} {
		if _, err := argoBranch(rev); !errors.Is(err, source.ErrNoBranch) {
			t.Errorf("%q: %v, want ErrNoBranch", rev, err)
		}
	}
}
