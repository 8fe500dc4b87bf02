package check

import (
	"context"
	"fmt"

	"github.com/claimwarden/claimwarden/integrations/gitstatus"
)

// Commenter keeps one claimwarden comment on a pull or merge request:
// created on the first run, updated in place on later ones.
// integrations/prcomment implements it for GitHub, GitLab and Gitea.
type Commenter interface {
	Upsert(ctx context.Context, repoURL string, number int, body string) (url string, err error)
}

// NewCommenter builds the Commenter of a Git host (its token included).
// It is the one place integrations/prcomment is wired in; a variable so
// that tests can see what --comment posts.
var NewCommenter = func(h gitstatus.Host) (Commenter, error) {
	return nil, fmt.Errorf("pull-request comments on %s hosts are not built into this binary", h.Type)
}

// Comment posts (or updates) the Markdown plan of r as the comment on pull
// request number of repoURL, and returns the comment's URL.
func Comment(ctx context.Context, h gitstatus.Host, repoURL string, number int, r *Report) (string, error) {
	c, err := NewCommenter(h)
	if err != nil {
		return "", err
	}
	url, err := c.Upsert(ctx, repoURL, number, Markdown(r))
	if err != nil {
		return "", fmt.Errorf("commenting on pull request %d of %s: %w", number, gitstatus.RedactURL(repoURL), err)
	}
	return url, nil
}
