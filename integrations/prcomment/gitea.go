package prcomment

import (
	"context"
	"fmt"
	"net/http"

	"code.gitea.io/sdk/gitea"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// giteaPerPage is Gitea's default [api] MAX_RESPONSE_ITEMS.
const giteaPerPage = 50

// giteaAPI keeps a pull request's comment through the issue comments API,
// which Gitea and Forgejo share: GET and POST
// repos/{owner}/{repo}/issues/{index}/comments, PATCH
// repos/{owner}/{repo}/issues/comments/{id}. Gitea stores a comment as
// LONGTEXT and sets no length limit.
type giteaAPI struct {
	host    githost.Host
	clients githost.Clients
}

func newGitea(h githost.Host, clients githost.Clients) (*giteaAPI, error) {
	// Built once here to check h; each call builds its own, which holds its
	// context (see githost.Clients.Gitea).
	if _, err := clients.Gitea(context.Background(), h); err != nil {
		return nil, err
	}
	return &giteaAPI{host: h, clients: clients}, nil
}

func (a *giteaAPI) client(ctx context.Context) (*gitea.Client, error) {
	return a.clients.Gitea(ctx, a.host)
}

func (a *giteaAPI) describe(repo githost.Repository, number int) string {
	return fmt.Sprintf("pull request %s/%s#%d", repo.Host, repo.Path, number)
}

func (a *giteaAPI) maxBody() (int, string) { return 0, "Gitea" }

// list follows the Link header: Gitea 1.26 answers this endpoint with every
// comment in one response (and no Link), paginating versions would not.
func (a *giteaAPI) list(ctx context.Context, path string, number int) ([]comment, error) {
	owner, name, err := ownerName(path)
	if err != nil {
		return nil, err
	}
	client, err := a.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []comment
	for page := 1; ; {
		got, resp, err := client.ListIssueComments(owner, name, int64(number), gitea.ListIssueCommentOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: giteaPerPage},
		})
		if err != nil {
			op := fmt.Sprintf("gitea: GET repos/%s/%s/issues/%d/comments (page %d)", owner, name, number, page)
			return nil, githost.GiteaError(op, resp, err, a.host.Token)
		}
		for _, c := range got {
			out = append(out, giteaComment(c))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		if resp.NextPage <= page {
			return nil, fmt.Errorf("gitea: GET repos/%s/%s/issues/%d/comments: page %d links to page %d as the next", owner, name, number, page, resp.NextPage)
		}
		page = resp.NextPage
	}
}

// self is GET /user, which a scoped token without read:user may not read:
// the identity is then unknown.
func (a *giteaAPI) self(ctx context.Context) (identity, error) {
	client, err := a.client(ctx)
	if err != nil {
		return identity{}, err
	}
	u, resp, err := client.GetMyUserInfo()
	if err != nil {
		if resp != nil && resp.Response != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound) {
			return identity{}, nil
		}
		return identity{}, githost.GiteaError("gitea: GET user", resp, err, a.host.Token)
	}
	return identity{known: true, userID: u.ID}, nil
}

func (a *giteaAPI) create(ctx context.Context, path string, number int, body string) (comment, error) {
	owner, name, err := ownerName(path)
	if err != nil {
		return comment{}, err
	}
	client, err := a.client(ctx)
	if err != nil {
		return comment{}, err
	}
	c, resp, err := client.CreateIssueComment(owner, name, int64(number), gitea.CreateIssueCommentOption{Body: body})
	if err != nil {
		op := fmt.Sprintf("gitea: POST repos/%s/%s/issues/%d/comments", owner, name, number)
		return comment{}, githost.GiteaError(op, resp, err, a.host.Token)
	}
	return giteaComment(c), nil
}

func (a *giteaAPI) edit(ctx context.Context, path string, _ int, old comment, body string) (comment, error) {
	owner, name, err := ownerName(path)
	if err != nil {
		return comment{}, err
	}
	client, err := a.client(ctx)
	if err != nil {
		return comment{}, err
	}
	c, resp, err := client.EditIssueComment(owner, name, old.id, gitea.EditIssueCommentOption{Body: body})
	if err != nil {
		op := fmt.Sprintf("gitea: PATCH repos/%s/%s/issues/comments/%d", owner, name, old.id)
		return comment{}, githost.GiteaError(op, resp, err, a.host.Token)
	}
	return giteaComment(c), nil
}

func giteaComment(c *gitea.Comment) comment {
	out := comment{id: c.ID, body: c.Body, url: c.HTMLURL}
	if c.Poster != nil {
		out.userID = c.Poster.ID
	}
	return out
}
