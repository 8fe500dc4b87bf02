package pullrequest

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"code.gitea.io/sdk/gitea"

	"github.com/claimwarden/claimwarden/integrations/gitstatus"
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
	// the requests (nil: a client with gitstatus.DefaultHTTPTimeout).
	Base  *url.URL
	Token string
	HTTP  *http.Client
}

// client is the commit statuses' Gitea client (one per operation: it holds
// ctx), with this host's write token.
func (g *Gitea) client(ctx context.Context) (*gitea.Client, error) {
	return gitstatus.NewGiteaClient(ctx, gitstatus.Host{URL: g.Base.String(), Type: gitstatus.Gitea, Token: g.Token}, g.HTTP)
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
	ops, err := g.operations(client, c)
	if err != nil {
		return PullRequest{}, err
	}
	_, resp, err := client.ChangeFiles(c.Owner, c.Repo, gitea.ChangeFilesOptions{
		Files: ops, Message: c.Message, Branch: c.Base, NewBranch: branch, ForcePush: true,
	})
	if err != nil {
		return PullRequest{}, gitstatus.GiteaError(fmt.Sprintf("gitea: POST repos/%s/%s/contents", c.Owner, c.Repo), resp, err, g.Token)
	}
	open, err := g.find(client, c.Owner, c.Repo, branch, gitea.StateOpen)
	if err != nil {
		return PullRequest{}, err
	}
	if open != nil {
		pr, resp, err := client.EditPullRequest(c.Owner, c.Repo, open.Index, gitea.EditPullRequestOption{Title: c.Title, Body: &c.Body})
		if err != nil {
			return PullRequest{}, gitstatus.GiteaError(fmt.Sprintf("gitea: PATCH repos/%s/%s/pulls/%d", c.Owner, c.Repo, open.Index), resp, err, g.Token)
		}
		return pullRequestOf(pr), nil
	}
	pr, resp, err := client.CreatePullRequest(c.Owner, c.Repo, gitea.CreatePullRequestOption{Head: branch, Base: c.Base, Title: c.Title, Body: c.Body})
	if err != nil {
		return PullRequest{}, gitstatus.GiteaError(fmt.Sprintf("gitea: POST repos/%s/%s/pulls", c.Owner, c.Repo), resp, err, g.Token)
	}
	return pullRequestOf(pr), nil
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
			return nil, gitstatus.GiteaError(fmt.Sprintf("gitea: GET repos/%s/%s/contents/%s", c.Owner, c.Repo, f.Path), resp, err, g.Token)
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
	pr, err := g.find(client, owner, repo, branch, gitea.StateAll)
	if err != nil || pr == nil {
		return nil, err
	}
	p := pullRequestOf(pr)
	return &p, nil
}

// find is the newest (highest-numbered) pull request from branch in
// state, nil when none is among the newest maxPages pages.
func (g *Gitea) find(client *gitea.Client, owner, repo, branch string, state gitea.StateType) (*gitea.PullRequest, error) {
	var newest *gitea.PullRequest
	for page := 1; page <= maxPages; page++ {
		prs, resp, err := client.ListRepoPullRequests(owner, repo, gitea.ListPullRequestsOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: 50}, State: state,
		})
		if err != nil {
			return nil, gitstatus.GiteaError(fmt.Sprintf("gitea: GET repos/%s/%s/pulls", owner, repo), resp, err, g.Token)
		}
		for _, pr := range prs {
			if pr.Head != nil && pr.Head.Ref == branch && (newest == nil || pr.Index > newest.Index) {
				newest = pr
			}
		}
		if len(prs) < 50 {
			break
		}
	}
	return newest, nil
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
		return nil, gitstatus.GiteaError(what, resp, err, g.Token)
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
			return nil, gitstatus.GiteaError(what, resp, err, g.Token)
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
		return "", gitstatus.GiteaError(what, resp, err, g.Token)
	}
	return defaultBranch(what, r.DefaultBranch)
}

func pullRequestOf(pr *gitea.PullRequest) PullRequest {
	p := PullRequest{Number: pr.Index, URL: pr.HTMLURL, State: Open}
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
