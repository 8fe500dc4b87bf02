package prcomment

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v93/github"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// githubMaxBody is GitHub's limit on a comment: "Body is too long (maximum
// is 65536 characters)". Counting code points is safe whichever way GitHub
// counts: 65536 code points are at most 262144 UTF-8 bytes, the other limit
// reported for issue comments.
const githubMaxBody = 65536

// githubPerPage is the largest page GitHub serves.
const githubPerPage = 100

// githubAPI keeps a pull request's comment through the issue comments API
// (a pull request's conversation is its issue's): GET and POST
// repos/{owner}/{repo}/issues/{number}/comments, PATCH
// repos/{owner}/{repo}/issues/comments/{id}.
type githubAPI struct {
	client *github.Client
	token  string
	appID  int64 // authenticating as a GitHub App installation
}

func newGitHub(h githost.Host, clients githost.Clients) (*githubAPI, error) {
	client, err := clients.GitHub(h)
	if err != nil {
		return nil, err
	}
	a := &githubAPI{client: client, token: h.Token}
	if h.GitHubApp != nil {
		a.appID = h.GitHubApp.AppID
	}
	return a, nil
}

func (a *githubAPI) describe(repo githost.Repository, number int) string {
	return fmt.Sprintf("pull request %s/%s#%d", repo.Host, repo.Path, number)
}

func (a *githubAPI) maxBody() (int, string) { return githubMaxBody, "GitHub" }

func (a *githubAPI) list(ctx context.Context, path string, number int) ([]comment, error) {
	owner, name, err := ownerName(path)
	if err != nil {
		return nil, err
	}
	var out []comment
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: githubPerPage}}
	for page := 1; ; {
		got, resp, err := a.client.Issues.ListComments(ctx, owner, name, number, opt)
		if err != nil {
			op := fmt.Sprintf("github: GET repos/%s/%s/issues/%d/comments (page %d)", owner, name, number, page)
			return nil, githost.GitHubError(op, resp, err, a.token)
		}
		for _, c := range got {
			out = append(out, githubComment(c))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		if resp.NextPage <= page {
			return nil, fmt.Errorf("github: GET repos/%s/%s/issues/%d/comments: page %d links to page %d as the next", owner, name, number, page, resp.NextPage)
		}
		page, opt.Page = resp.NextPage, resp.NextPage
	}
}

// self is the App when authenticating as one. Otherwise it is GET /user,
// which GitHub refuses (403 "Resource not accessible by integration") to
// installation tokens such as Actions' GITHUB_TOKEN: the identity is then
// unknown, not an error.
func (a *githubAPI) self(ctx context.Context) (identity, error) {
	if a.appID != 0 {
		return identity{known: true, appID: a.appID}, nil
	}
	u, resp, err := a.client.Users.Get(ctx, "")
	if err != nil {
		if resp != nil && resp.Response != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound) {
			return identity{}, nil
		}
		return identity{}, githost.GitHubError("github: GET user", resp, err, a.token)
	}
	return identity{known: true, userID: u.GetID()}, nil
}

func (a *githubAPI) create(ctx context.Context, path string, number int, body string) (comment, error) {
	owner, name, err := ownerName(path)
	if err != nil {
		return comment{}, err
	}
	c, resp, err := a.client.Issues.CreateComment(ctx, owner, name, number, github.IssueCommentRequest{Body: body})
	if err != nil {
		op := fmt.Sprintf("github: POST repos/%s/%s/issues/%d/comments", owner, name, number)
		return comment{}, githost.GitHubError(op, resp, err, a.token)
	}
	return githubComment(c), nil
}

func (a *githubAPI) edit(ctx context.Context, path string, _ int, old comment, body string) (comment, error) {
	owner, name, err := ownerName(path)
	if err != nil {
		return comment{}, err
	}
	c, resp, err := a.client.Issues.UpdateComment(ctx, owner, name, old.id, github.IssueCommentRequest{Body: body})
	if err != nil {
		op := fmt.Sprintf("github: PATCH repos/%s/%s/issues/comments/%d", owner, name, old.id)
		return comment{}, githost.GitHubError(op, resp, err, a.token)
	}
	return githubComment(c), nil
}

func githubComment(c *github.IssueComment) comment {
	return comment{
		id:     c.GetID(),
		body:   c.GetBody(),
		userID: c.GetUser().GetID(),
		appID:  c.GetPerformedViaGithubApp().GetID(),
		url:    c.GetHTMLURL(),
	}
}

// ownerName splits owner/name; GitHub and Gitea have no nested owners.
func ownerName(path string) (owner, name string, err error) {
	owner, name, ok := strings.Cut(path, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", &githost.PermanentError{Err: fmt.Errorf("repository path %q is not owner/name", path)}
	}
	return owner, name, nil
}
