package pullrequest

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"code.gitea.io/sdk/gitea"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// maxPages bounds the pages of pull requests read to find a key's.
const maxPages = 10

// Gitea proposes through the Gitea (and Forgejo) API: ChangeFiles
// (POST repos/{o}/{r}/contents) makes the branch from the base with every
// file in one commit, force-pushed when the branch exists; then the pull
// request is created or edited.
type Gitea struct {
	// Base is the instance's URL; Token a token that may write the
	// repositories (separate from the commit-status tokens); HTTP carries
	// the requests (nil: a client with githost.DefaultHTTPTimeout).
	Base  *url.URL
	Token string
	HTTP  *http.Client
	// Identities caches the token's user (nil: asked each time).
	Identities *Identities
}

// client is the Git-host layer's Gitea client (one per operation: it holds
// ctx), with this host's write token.
func (g *Gitea) client(ctx context.Context) (*gitea.Client, error) {
	return githost.Clients{HTTP: g.HTTP}.Gitea(ctx, githost.Host{URL: g.Base.String(), Type: githost.Gitea, Token: g.Token})
}

func (g *Gitea) Propose(ctx context.Context, c Change) (PullRequest, error) {
	branch, err := branchOf(c.Key)
	if err != nil {
		return PullRequest{}, err
	}
	client, err := g.client(ctx)
	if err != nil {
		return PullRequest{}, err
	}
	me, err := g.self(client)
	if err != nil {
		return PullRequest{}, err
	}
	cands, err := g.find(client, c.Owner, c.Repo, branch, gitea.StateOpen)
	if err != nil {
		return PullRequest{}, err
	}
	open, err := mine(me, branch, c.Base, cands)
	if err != nil {
		return PullRequest{}, fmt.Errorf("gitea: repos/%s/%s: %w", c.Owner, c.Repo, err)
	}
	ops, err := g.operations(client, c)
	if err != nil {
		return PullRequest{}, err
	}
	made, resp, err := client.ChangeFiles(c.Owner, c.Repo, gitea.ChangeFilesOptions{
		Files: ops, Message: c.Message, Branch: c.Base, NewBranch: branch, ForcePush: true,
	})
	if err != nil {
		return PullRequest{}, githost.GiteaError(fmt.Sprintf("gitea: POST repos/%s/%s/contents", c.Owner, c.Repo), resp, err, g.Token)
	}
	if made.Commit == nil || made.Commit.SHA == "" {
		return PullRequest{}, fmt.Errorf("gitea: POST repos/%s/%s/contents: the answer names no commit", c.Owner, c.Repo)
	}
	var pr *gitea.PullRequest
	if open != nil {
		pr, resp, err = client.EditPullRequest(c.Owner, c.Repo, open.pr.Number, gitea.EditPullRequestOption{Title: c.Title, Body: &c.Body})
		if err != nil {
			return PullRequest{}, githost.GiteaError(fmt.Sprintf("gitea: PATCH repos/%s/%s/pulls/%d", c.Owner, c.Repo, open.pr.Number), resp, err, g.Token)
		}
	} else {
		pr, resp, err = client.CreatePullRequest(c.Owner, c.Repo, gitea.CreatePullRequestOption{Head: branch, Base: c.Base, Title: c.Title, Body: c.Body})
		if err != nil {
			return PullRequest{}, githost.GiteaError(fmt.Sprintf("gitea: POST repos/%s/%s/pulls", c.Owner, c.Repo), resp, err, g.Token)
		}
	}
	p := pullRequestOf(pr)
	p.Head = made.Commit.SHA
	return p, nil
}

// self is the token's user ID (GET /user), once per instance and token.
func (g *Gitea) self(client *gitea.Client) (string, error) {
	return g.Identities.of(g.Base.String(), g.Token, func() (string, error) {
		u, resp, err := client.GetMyUserInfo()
		if err != nil {
			return "", githost.GiteaError("gitea: GET user", resp, err, g.Token)
		}
		return strconv.FormatInt(u.ID, 10), nil
	})
}

// operations are the file changes of c against its base: an update (with
// the base's blob SHA, as the API requires) or a create.
func (g *Gitea) operations(client *gitea.Client, c Change) ([]*gitea.ChangeFileOperation, error) {
	ops := make([]*gitea.ChangeFileOperation, 0, len(c.Files))
	for _, f := range c.Files {
		op := &gitea.ChangeFileOperation{Operation: "create", Path: f.Path, Content: base64.StdEncoding.EncodeToString(f.Content)}
		cur, resp, err := client.GetContents(c.Owner, c.Repo, c.Base, f.Path)
		switch {
		case err == nil:
			op.Operation, op.SHA = "update", cur.SHA
		case resp != nil && resp.StatusCode == http.StatusNotFound:
		default:
			return nil, githost.GiteaError(fmt.Sprintf("gitea: GET repos/%s/%s/contents/%s", c.Owner, c.Repo, f.Path), resp, err, g.Token)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func (g *Gitea) Last(ctx context.Context, owner, repo, key string) (*PullRequest, error) {
	branch, err := branchOf(key)
	if err != nil {
		return nil, err
	}
	client, err := g.client(ctx)
	if err != nil {
		return nil, err
	}
	me, err := g.self(client)
	if err != nil {
		return nil, err
	}
	cands, err := g.find(client, owner, repo, branch, gitea.StateAll)
	if err != nil {
		return nil, err
	}
	return last(me, cands), nil
}

// find are the pull requests from a branch named branch in state, newest
// (highest-numbered) first, among the newest maxPages pages.
func (g *Gitea) find(client *gitea.Client, owner, repo, branch string, state gitea.StateType) ([]candidate, error) {
	cands, _, err := g.list(client, owner, repo, state, maxPages)
	return slices.DeleteFunc(cands, func(c candidate) bool { return c.head != branch }), err
}

// list are the pull requests in state, newest (highest-numbered) first,
// among the newest pages pages; more says there are more.
func (g *Gitea) list(client *gitea.Client, owner, repo string, state gitea.StateType, pages int) (cands []candidate, more bool, err error) {
	var found []*gitea.PullRequest
	for page := 1; ; page++ {
		prs, resp, err := client.ListRepoPullRequests(owner, repo, gitea.ListPullRequestsOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: 50}, State: state,
		})
		if err != nil {
			return nil, false, githost.GiteaError(fmt.Sprintf("gitea: GET repos/%s/%s/pulls?state=%s", owner, repo, state), resp, err, g.Token)
		}
		found = append(found, slices.DeleteFunc(prs, func(pr *gitea.PullRequest) bool { return pr.Head == nil })...)
		if len(prs) < 50 {
			break
		}
		if page == pages {
			more = true
			break
		}
	}
	slices.SortFunc(found, func(a, b *gitea.PullRequest) int { return cmp.Compare(b.Index, a.Index) })
	cands = make([]candidate, 0, len(found))
	for _, pr := range found {
		c := candidate{pr: pullRequestOf(pr), head: pr.Head.Ref, sameRepo: pr.Base != nil && pr.Head.RepoID != 0 && pr.Head.RepoID == pr.Base.RepoID}
		if pr.Base != nil {
			c.base = pr.Base.Ref
		}
		if pr.Poster != nil {
			c.author, c.authorName = strconv.FormatInt(pr.Poster.ID, 10), pr.Poster.UserName
		}
		cands = append(cands, c)
	}
	return cands, more, nil
}

func (g *Gitea) Open(ctx context.Context, owner, repo, prefix string) (map[string]PullRequest, error) {
	client, err := g.client(ctx)
	if err != nil {
		return nil, err
	}
	me, err := g.self(client)
	if err != nil {
		return nil, err
	}
	cands, more, err := g.list(client, owner, repo, gitea.StateOpen, maxOpenPages)
	if err != nil {
		return nil, err
	}
	if more {
		return nil, fmt.Errorf("gitea: GET repos/%s/%s/pulls?state=open: more than %d pages: %w", owner, repo, maxOpenPages, ErrTooManyOpen)
	}
	return openByKey(me, prefix, cands), nil
}

func (g *Gitea) File(ctx context.Context, owner, repo, ref, path string) ([]byte, error) {
	client, err := g.client(ctx)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("gitea: GET repos/%s/%s/raw/%s?ref=%s", owner, repo, path, ref)
	body, resp, err := client.GetFileReader(owner, repo, ref, path)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
		}
		return nil, githost.GiteaError(what, resp, err, g.Token)
	}
	defer body.Close()
	return readBounded(body, what)
}

func (g *Gitea) Files(ctx context.Context, owner, repo, ref, dir string) ([]string, error) {
	client, err := g.client(ctx)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("gitea: GET repos/%s/%s/git/trees/%s?recursive=1", owner, repo, ref)
	var paths []string
	for page := 1; ; page++ {
		tree, resp, err := client.GetTrees(owner, repo, gitea.ListTreeOptions{Ref: ref, Recursive: true, ListOptions: gitea.ListOptions{Page: page, PageSize: 1000}})
		if err != nil {
			return nil, githost.GiteaError(what, resp, err, g.Token)
		}
		for _, e := range tree.Entries {
			if e.Type == "blob" && under(e.Path, dir) {
				paths = append(paths, e.Path)
			}
		}
		if len(paths) > MaxFiles || page*1000 > 10*MaxFiles {
			return nil, fmt.Errorf("%s: more than %d files under %q: %w", what, MaxFiles, dir, ErrTooLarge)
		}
		if !tree.Truncated {
			break
		}
	}
	slices.Sort(paths)
	return paths, nil
}

func (g *Gitea) DefaultBranch(ctx context.Context, owner, repo string) (string, error) {
	client, err := g.client(ctx)
	if err != nil {
		return "", err
	}
	what := fmt.Sprintf("gitea: GET repos/%s/%s", owner, repo)
	r, resp, err := client.GetRepo(owner, repo)
	if err != nil {
		return "", githost.GiteaError(what, resp, err, g.Token)
	}
	return defaultBranch(what, r.DefaultBranch)
}

func pullRequestOf(pr *gitea.PullRequest) PullRequest {
	p := PullRequest{Number: pr.Index, URL: pr.HTMLURL, State: Open}
	if pr.Head != nil {
		p.Head = pr.Head.Sha
	}
	switch {
	case pr.HasMerged:
		p.State = Merged
		if pr.Merged != nil {
			p.ClosedAt = *pr.Merged
		}
	case pr.State == gitea.StateClosed:
		p.State = Closed
		if pr.Closed != nil {
			p.ClosedAt = *pr.Closed
		}
	}
	return p
}
