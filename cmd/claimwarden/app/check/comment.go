package check

import (
	"context"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/prcomment"
)

// Comment makes the Markdown plan of r the comment key on pull (merge)
// request number of repo — created on the first run, edited in place on
// the next ones — and returns the comment's URL. key tells apart the
// comments of several checks on one pull request; check uses the status
// context prefix, which tells clusters apart the same way.
func Comment(ctx context.Context, h githost.Host, repo githost.Repository, number int, key string, r *Report) (string, error) {
	c, err := prcomment.New(h, githost.Clients{})
	if err != nil {
		return "", err
	}
	return c.Upsert(ctx, repo, number, key, Markdown(r))
}
