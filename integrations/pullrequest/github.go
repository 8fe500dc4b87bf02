package pullrequest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v93/github"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// maxTreeBytes bounds a recursive tree read; GitHub itself truncates one
// at about 7 MB.
const maxTreeBytes = 8 << 20

// GitHub proposes through the GitHub REST API (github.com and Enterprise):
// the branch is built with the Git Data API from the base branch's head,
// all files in one commit, and moved there by force; then the open pull
// request from it is edited, or one is created.
type GitHub struct {
	Client *github.Client
	// Token is scrubbed from errors; empty when a GitHub App authenticates.
	Token string
	// AppID and AppClient are the GitHub App's that Client authenticates as
	// an installation of (0, nil: a token): AppClient authenticates as the
	// App itself, which reads the App's bot user (GET /app), the author of
	// what its installations open; an installation may not read it.
	AppID     int64
	AppClient *github.Client
	// Identities caches the credential's user (nil: asked each time).
	Identities *Identities
}

func (g *GitHub) err(ctx string, resp *github.Response, err error) error {
	return githost.GitHubError("github: "+ctx, resp, err, g.Token)
}

func (g *GitHub) Propose(ctx context.Context, c Change) (PullRequest, error) {
	branch, err := branchOf(c.Key)
	if err != nil {
		return PullRequest{}, err
	}
	me, err := g.self(ctx)
	if err != nil {
		return PullRequest{}, err
	}
	cands, err := g.find(ctx, c.Owner, c.Repo, branch, "open")
	if err != nil {
		return PullRequest{}, err
	}
	open, err := mine(me, branch, c.Base, cands)
	if err != nil {
		return PullRequest{}, fmt.Errorf("github: repos/%s/%s: %w", c.Owner, c.Repo, err)
	}
	head, err := g.push(ctx, c, branch)
	if err != nil {
		return PullRequest{}, err
	}
	var pr *github.PullRequest
	var resp *github.Response
	if open != nil {
		pr, resp, err = g.Client.PullRequests.Edit(ctx, c.Owner, c.Repo, int(open.pr.Number), &github.PullRequest{Title: &c.Title, Body: &c.Body})
		if err != nil {
			return PullRequest{}, g.err(fmt.Sprintf("PATCH repos/%s/%s/pulls/%d", c.Owner, c.Repo, open.pr.Number), resp, err)
		}
	} else {
		pr, resp, err = g.Client.PullRequests.Create(ctx, c.Owner, c.Repo, github.CreatePullRequest{
			Title: &c.Title, Head: branch, Base: c.Base, Body: &c.Body,
		})
		if err != nil {
			return PullRequest{}, g.err(fmt.Sprintf("POST repos/%s/%s/pulls", c.Owner, c.Repo), resp, err)
		}
	}
	p := githubPullRequest(pr)
	p.Head = head
	return p, nil
}

// self is the login of the token's user (GET /user), or of the App's bot
// user ("<slug>[bot]", from GET /app), once per host and credential.
func (g *GitHub) self(ctx context.Context) (string, error) {
	credential := g.Token
	if g.AppClient != nil {
		credential = fmt.Sprintf("github-app %d", g.AppID)
	}
	return g.Identities.of(g.Client.BaseURL(), credential, func() (string, error) {
		if g.AppClient != nil {
			app, resp, err := g.AppClient.Apps.Get(ctx, "")
			if err != nil {
				return "", g.err("GET app", resp, err)
			}
			if app.GetSlug() == "" {
				return "", nil
			}
			return app.GetSlug() + "[bot]", nil
		}
		u, resp, err := g.Client.Users.Get(ctx, "")
		if err != nil {
			return "", g.err("GET user", resp, err)
		}
		return u.GetLogin(), nil
	})
}

// push points branch at one new commit on the base's head holding c.Files:
// the branch is rebuilt, not added to, so an update never carries an older
// proposal's commits or conflicts with a base that moved. It returns the
// commit made.
func (g *GitHub) push(ctx context.Context, c Change, branch string) (string, error) {
	repo := fmt.Sprintf("repos/%s/%s", c.Owner, c.Repo)
	base, resp, err := g.Client.Git.GetRef(ctx, c.Owner, c.Repo, "heads/"+c.Base)
	if err != nil {
		return "", g.err("GET "+repo+"/git/ref/heads/"+c.Base, resp, err)
	}
	head := base.GetObject().GetSHA()
	commit, resp, err := g.Client.Git.GetCommit(ctx, c.Owner, c.Repo, head)
	if err != nil {
		return "", g.err("GET "+repo+"/git/commits/"+head, resp, err)
	}
	entries := make([]*github.TreeEntry, 0, len(c.Files))
	for _, f := range c.Files {
		e := &github.TreeEntry{Path: new(f.Path), Mode: new("100644"), Type: new("blob")}
		if utf8.Valid(f.Content) {
			e.Content = new(string(f.Content)) // the tree API takes UTF-8 content inline
		} else {
			blob, resp, err := g.Client.Git.CreateBlob(ctx, c.Owner, c.Repo, github.Blob{
				Content: base64.StdEncoding.EncodeToString(f.Content), Encoding: new("base64"),
			})
			if err != nil {
				return "", g.err("POST "+repo+"/git/blobs", resp, err)
			}
			e.SHA = blob.SHA
		}
		entries = append(entries, e)
	}
	tree, resp, err := g.Client.Git.CreateTree(ctx, c.Owner, c.Repo, commit.GetTree().GetSHA(), entries)
	if err != nil {
		return "", g.err("POST "+repo+"/git/trees", resp, err)
	}
	made, resp, err := g.Client.Git.CreateCommit(ctx, c.Owner, c.Repo, github.Commit{
		Message: &c.Message, Tree: &github.Tree{SHA: tree.SHA}, Parents: []*github.Commit{{SHA: &head}},
	}, nil)
	if err != nil {
		return "", g.err("POST "+repo+"/git/commits", resp, err)
	}
	_, resp, err = g.Client.Git.GetRef(ctx, c.Owner, c.Repo, "heads/"+branch)
	switch {
	case err == nil:
		_, resp, err = g.Client.Git.UpdateRef(ctx, c.Owner, c.Repo, "heads/"+branch, github.UpdateRef{SHA: made.GetSHA(), Force: new(true)})
		if err != nil {
			return "", g.err("PATCH "+repo+"/git/refs/heads/"+branch, resp, err)
		}
	case resp != nil && resp.Response != nil && resp.StatusCode == http.StatusNotFound:
		_, resp, err = g.Client.Git.CreateRef(ctx, c.Owner, c.Repo, github.CreateRef{Ref: "refs/heads/" + branch, SHA: made.GetSHA()})
		if err != nil {
			return "", g.err("POST "+repo+"/git/refs", resp, err)
		}
	default:
		return "", g.err("GET "+repo+"/git/ref/heads/"+branch, resp, err)
	}
	return made.GetSHA(), nil
}

// find are the pull requests from branch in state whose head is in the
// owner's account (owner:branch; forks elsewhere are not listed), newest
// first, the newest 50.
func (g *GitHub) find(ctx context.Context, owner, repo, branch, state string) ([]candidate, error) {
	prs, resp, err := g.Client.PullRequests.List(ctx, owner, repo, &github.PullRequestListOptions{
		State: state, Head: owner + ":" + branch, Sort: "created", Direction: "desc", ListOptions: github.ListOptions{PerPage: 50},
	})
	if err != nil {
		return nil, g.err(fmt.Sprintf("GET repos/%s/%s/pulls", owner, repo), resp, err)
	}
	cands := make([]candidate, 0, len(prs))
	for _, pr := range prs {
		cands = append(cands, githubCandidate(pr))
	}
	return cands, nil
}

func githubCandidate(pr *github.PullRequest) candidate {
	headRepo, baseRepo := pr.GetHead().GetRepo().GetID(), pr.GetBase().GetRepo().GetID()
	return candidate{
		pr: githubPullRequest(pr), author: pr.GetUser().GetLogin(), authorName: pr.GetUser().GetLogin(),
		sameRepo: headRepo != 0 && headRepo == baseRepo, base: pr.GetBase().GetRef(), head: pr.GetHead().GetRef(),
	}
}

func (g *GitHub) Open(ctx context.Context, owner, repo, prefix string) (map[string]PullRequest, error) {
	me, err := g.self(ctx)
	if err != nil {
		return nil, err
	}
	var cands []candidate
	opt := &github.PullRequestListOptions{State: "open", Sort: "created", Direction: "desc", ListOptions: github.ListOptions{PerPage: 100}}
	for range maxOpenPages {
		prs, resp, err := g.Client.PullRequests.List(ctx, owner, repo, opt)
		if err != nil {
			return nil, g.err(fmt.Sprintf("GET repos/%s/%s/pulls?state=open", owner, repo), resp, err)
		}
		for _, pr := range prs {
			cands = append(cands, githubCandidate(pr))
		}
		if resp.NextPage == 0 {
			return openByKey(me, prefix, cands), nil
		}
		opt.Page = resp.NextPage
	}
	return nil, fmt.Errorf("github: GET repos/%s/%s/pulls?state=open: more than %d pages: %w", owner, repo, maxOpenPages, ErrTooManyOpen)
}

func (g *GitHub) Last(ctx context.Context, owner, repo, key string) (*PullRequest, error) {
	branch, err := branchOf(key)
	if err != nil {
		return nil, err
	}
	me, err := g.self(ctx)
	if err != nil {
		return nil, err
	}
	cands, err := g.find(ctx, owner, repo, branch, "all")
	if err != nil {
		return nil, err
	}
	return last(me, cands), nil
}

func (g *GitHub) File(ctx context.Context, owner, repo, ref, path string) ([]byte, error) {
	what := fmt.Sprintf("GET repos/%s/%s/contents/%s?ref=%s", owner, repo, path, ref)
	u := fmt.Sprintf("repos/%s/%s/contents/%s?ref=%s", owner, repo, escapeSegments(path), url.QueryEscape(ref))
	// The raw media type streams the file (up to 100 MB) instead of a JSON
	// document with it base64-encoded (up to 1 MB), so that it is bounded
	// as it is read.
	body, err := g.get(ctx, what, u, "application/vnd.github.raw+json")
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return readBounded(body, "github: "+what)
}

func (g *GitHub) Files(ctx context.Context, owner, repo, ref, dir string) ([]string, error) {
	what := fmt.Sprintf("GET repos/%s/%s/git/trees/%s?recursive=1", owner, repo, ref)
	body, err := g.get(ctx, what, fmt.Sprintf("repos/%s/%s/git/trees/%s?recursive=1", owner, repo, escapeSegments(ref)), "application/vnd.github+json")
	if err != nil {
		return nil, err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxTreeBytes+1))
	if err != nil {
		return nil, fmt.Errorf("github: %s: %w", what, err)
	}
	if len(data) > maxTreeBytes {
		return nil, fmt.Errorf("github: %s: more than %d bytes: %w", what, maxTreeBytes, ErrTooLarge)
	}
	var tree github.Tree
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, fmt.Errorf("github: %s: %w", what, err)
	}
	if tree.GetTruncated() {
		return nil, fmt.Errorf("github: %s: the tree is truncated: %w", what, ErrTooLarge)
	}
	var paths []string
	for _, e := range tree.Entries {
		if e.GetType() == "blob" && under(e.GetPath(), dir) {
			paths = append(paths, e.GetPath())
		}
	}
	if len(paths) > MaxFiles {
		return nil, fmt.Errorf("github: %s: more than %d files under %q: %w", what, MaxFiles, dir, ErrTooLarge)
	}
	slices.Sort(paths)
	return paths, nil
}

func (g *GitHub) DefaultBranch(ctx context.Context, owner, repo string) (string, error) {
	what := fmt.Sprintf("GET repos/%s/%s", owner, repo)
	r, resp, err := g.Client.Repositories.Get(ctx, owner, repo)
	if err != nil {
		return "", g.err(what, resp, err)
	}
	return defaultBranch("github: "+what, r.GetDefaultBranch())
}

// get sends GET u (relative to the API) and returns the body unread, for
// the caller to bound; a 404 wraps ErrNotFound.
func (g *GitHub) get(ctx context.Context, what, u, accept string) (io.ReadCloser, error) {
	req, err := g.Client.NewRequest(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("github: %s: %w", what, err)
	}
	req.Header.Set("Accept", accept)
	resp, err := g.Client.BareDo(req)
	if err != nil {
		if resp != nil && resp.Response != nil && resp.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("github: %s: %w", what, ErrNotFound)
		}
		return nil, g.err(what, resp, err)
	}
	return resp.Body, nil
}

// escapeSegments path-escapes each segment of a slash-separated path.
func escapeSegments(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func githubPullRequest(pr *github.PullRequest) PullRequest {
	p := PullRequest{Number: int64(pr.GetNumber()), URL: pr.GetHTMLURL(), State: Open, Head: pr.GetHead().GetSHA()}
	switch {
	case pr.MergedAt != nil:
		p.State, p.ClosedAt = Merged, pr.MergedAt.Time
	case pr.GetState() == "closed":
		p.State = Closed
		if pr.ClosedAt != nil {
			p.ClosedAt = pr.ClosedAt.Time
		}
	}
	return p
}
