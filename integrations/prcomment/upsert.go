package prcomment

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// api is one host's comment API; commenter runs the same find-then-edit
// flow over each.
type api interface {
	// describe names a pull request in messages: "pull request
	// host/owner/name#12", "merge request host/group/name!12".
	describe(repo githost.Repository, number int) string
	// maxBody is the longest comment the host accepts, in Unicode code
	// points (0: no limit), and hostName names the host in the note of a
	// truncated comment.
	maxBody() (limit int, hostName string)
	// list returns every comment of the pull request at path (inside the
	// instance), oldest first, following every page.
	list(ctx context.Context, path string, number int) ([]comment, error)
	// self says who the token posts as; identity.known is false when the
	// host does not tell this token.
	self(ctx context.Context) (identity, error)
	create(ctx context.Context, path string, number int, body string) (comment, error)
	edit(ctx context.Context, path string, number int, c comment, body string) (comment, error)
}

// comment is what the flow needs of a comment.
type comment struct {
	id   int64
	body string
	// userID is the author; appID the GitHub App it was posted through (0:
	// none).
	userID, appID int64
	url           string
}

// identity is who the token posts as: a user, or a GitHub App (whose
// comments' author is the App's bot user, whose ID the installation cannot
// read, but which GitHub records on each comment).
type identity struct {
	known         bool
	userID, appID int64
}

func (me identity) wrote(c comment) bool {
	if me.appID != 0 {
		return c.appID == me.appID
	}
	return c.userID == me.userID
}

type commenter struct {
	host githost.Host
	api  api

	// me is looked up once, and only when a comment with a marker exists:
	// a first run costs no request for it.
	mu sync.Mutex
	me *identity
}

func (c *commenter) Upsert(ctx context.Context, repo githost.Repository, number int, key, body string) (string, error) {
	where := c.api.describe(repo, number)
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("comment %q on %s: %w", key, where, err)
	}
	if number <= 0 {
		return fail(fmt.Errorf("number %d is not a pull request number", number))
	}
	if err := checkKey(key); err != nil {
		return fail(err)
	}
	limit, hostName := c.api.maxBody()
	text, err := compose(key, body, limit, hostName)
	if err != nil {
		return fail(err)
	}
	path := c.host.RepositoryPath(repo)

	all, err := c.api.list(ctx, path, number)
	if err != nil {
		return fail(err)
	}
	var marked []comment
	for _, cm := range all {
		if strings.Contains(cm.body, Marker(key)) {
			marked = append(marked, cm)
		}
	}
	var found *comment
	if len(marked) > 0 {
		me, err := c.identity(ctx)
		if err != nil {
			return fail(err)
		}
		for i := range marked {
			// Without an identity the first marked comment is taken; with
			// one, another user's comment (e.g. quoting ours) is left alone.
			if !me.known || me.wrote(marked[i]) {
				found = &marked[i]
				break
			}
		}
	}

	var res comment
	switch {
	case found == nil:
		res, err = c.api.create(ctx, path, number, text)
	case found.body == text:
		return found.url, nil
	default:
		res, err = c.api.edit(ctx, path, number, *found, text)
	}
	if err != nil {
		return fail(err)
	}
	return res.url, nil
}

func (c *commenter) identity(ctx context.Context) (identity, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.me != nil {
		return *c.me, nil
	}
	me, err := c.api.self(ctx)
	if err != nil {
		return identity{}, err
	}
	c.me = &me
	return me, nil
}
