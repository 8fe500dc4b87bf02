// Package prcomment keeps one comment per check on a pull request (GitHub,
// GitHub Enterprise, Gitea, Forgejo) or merge request (GitLab) and updates
// it in place on every run, so that a pull request shows the latest report
// of `claimwarden check` instead of one comment per push.
//
// A comment is found again by a hidden marker, Marker(key), on its first
// line; the key tells apart several checks on one pull request (e.g. one per
// cluster). Hosts, tokens, API URLs and the classification of errors
// (*githost.RateLimitError, *githost.PermanentError) are those of
// integrations/githost.
package prcomment

import (
	"context"
	"fmt"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Commenter posts the comments of one Git host.
type Commenter interface {
	// Upsert makes body (markdown) the comment key on pull or merge request
	// number of repo: it edits the comment with Marker(key) that the
	// token's user wrote (or, when the host does not say who that is, the
	// first comment with the marker), or creates one. A body that did not
	// change is not sent again. A body longer than the host accepts is
	// truncated, with a note saying so. It returns the comment's web URL.
	// Errors name the repository and the pull request.
	Upsert(ctx context.Context, repo githost.Repository, number int, key, body string) (url string, err error)
}

// New returns the Commenter for h, whose URL, type and credentials are read
// as githost reads them (githost.ResolveHost finds h for a repository).
// clients builds the host's API clients (its HTTP client, its shared GitHub
// App installation tokens). It makes no request.
func New(h githost.Host, clients githost.Clients) (Commenter, error) {
	var (
		a   api
		err error
	)
	switch h.Type {
	case githost.GitHub:
		a, err = newGitHub(h, clients)
	case githost.GitLab:
		a, err = newGitLab(h, clients)
	case githost.Gitea:
		a, err = newGitea(h, clients)
	default:
		return nil, fmt.Errorf("git host %s: type %q: pull-request comments are supported on %s, %s and %s only",
			proposal.RedactURL(h.URL), h.Type, githost.GitHub, githost.GitLab, githost.Gitea)
	}
	if err != nil {
		return nil, err
	}
	return &commenter{host: h, api: a}, nil
}
