package pullrequest

import (
	"context"
	"errors"
	"strings"
)

// maxOpenPages bounds the pages of a repository's open pull requests that
// Open reads (100 a page on GitHub, GitLab and Bitbucket Server, 50 on
// Gitea and Bitbucket Cloud): a repository with more is asked key by key
// (Last).
const maxOpenPages = 5

// ErrTooManyOpen says a repository has more open pull requests than Open
// lists: a key not among those listed may still be open.
var ErrTooManyOpen = errors.New("more open pull requests than are listed")

// OpenLister is a Proposer that lists a repository's open pull requests
// in one request per page, not one per key: autoresize follows every open
// pull request of its own at each check, and a repository's listing,
// shared by all of them and conditional where the host answers ETags, is
// what keeps a fleet within the host's rate limit. Every host's Proposer
// lists.
type OpenLister interface {
	// Open are claimwarden's open pull requests (own.go) from branches
	// BranchPrefix+prefix..., by key; ErrTooManyOpen when the repository
	// has more open pull requests, of anyone's, than are listed.
	Open(ctx context.Context, owner, repo, prefix string) (map[string]PullRequest, error)
}

// openByKey are the open pull requests among cands (newest first, each
// with its head branch) that identity me opened from the repository's own
// branches BranchPrefix+prefix..., by key: the newest of a key's.
func openByKey(me, prefix string, cands []candidate) map[string]PullRequest {
	open := map[string]PullRequest{}
	for _, c := range cands {
		key, ok := strings.CutPrefix(c.head, BranchPrefix)
		if !ok || !strings.HasPrefix(key, prefix) || c.pr.State != Open {
			continue
		}
		if _, seen := open[key]; seen {
			continue
		}
		if mine := own(me, []candidate{c}); mine != nil {
			open[key] = mine.pr
		}
	}
	return open
}
