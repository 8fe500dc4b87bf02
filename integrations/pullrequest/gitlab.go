package pullrequest

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// gitlabTreePages bounds the pages of a tree listed (100 entries each,
// directories included).
const gitlabTreePages = 2 * MaxFiles / 100

// GitLab proposes through the GitLab REST API: one commit (Commits API)
// on branch, started from the base branch and forced, so that the branch is
// rebuilt at every update; then the open merge request from it is updated,
// or one is created. The project is owner/repo (owner may hold subgroups),
// its path inside the instance.
type GitLab struct {
	Client *gitlab.Client
	Token  string // scrubbed from errors
	// Identities caches the token's user (nil: asked each time).
	Identities *Identities
}

func (g *GitLab) err(op string, resp *gitlab.Response, err error) error {
	return githost.GitLabError("gitlab: "+op, resp, err, g.Token)
}

func notFound(resp *gitlab.Response) bool {
	return resp != nil && resp.Response != nil && resp.StatusCode == http.StatusNotFound
}

func (g *GitLab) Propose(ctx context.Context, c Change) (PullRequest, error) {
	branch, err := branchOf(c.Key)
	if err != nil {
		return PullRequest{}, err
	}
	project := c.Owner + "/" + c.Repo
	pid := gitlab.PathEscape(project)
	me, err := g.self(ctx)
	if err != nil {
		return PullRequest{}, err
	}
	cands, err := g.find(ctx, project, branch, "opened")
	if err != nil {
		return PullRequest{}, err
	}
	open, err := mine(me, branch, c.Base, cands)
	if err != nil {
		return PullRequest{}, fmt.Errorf("gitlab: projects/%s: %w", pid, err)
	}
	actions := make([]*gitlab.CommitActionOptions, 0, len(c.Files))
	for _, f := range c.Files {
		// The Commits API refuses "update" of a file the start branch does
		// not have, and "create" of one it has.
		action := gitlab.FileUpdate
		_, resp, err := g.Client.RepositoryFiles.GetFileMetaData(project, f.Path, &gitlab.GetFileMetaDataOptions{Ref: &c.Base}, gitlab.WithContext(ctx))
		switch {
		case notFound(resp):
			action = gitlab.FileCreate
		case err != nil:
			return PullRequest{}, g.err(fmt.Sprintf("HEAD projects/%s/repository/files/%s", pid, gitlab.PathEscape(f.Path)), resp, err)
		}
		a := &gitlab.CommitActionOptions{Action: &action, FilePath: new(f.Path), Content: new(string(f.Content))}
		if !utf8.Valid(f.Content) {
			a.Content, a.Encoding = new(base64.StdEncoding.EncodeToString(f.Content)), new("base64")
		}
		actions = append(actions, a)
	}
	made, resp, err := g.Client.Commits.CreateCommit(project, &gitlab.CreateCommitOptions{
		Branch: &branch, StartBranch: &c.Base, Force: new(true), CommitMessage: &c.Message, Actions: actions,
	}, gitlab.WithContext(ctx))
	if err != nil {
		return PullRequest{}, g.err(fmt.Sprintf("POST projects/%s/repository/commits", pid), resp, err)
	}
	var mr *gitlab.MergeRequest
	if open != nil {
		mr, resp, err = g.Client.MergeRequests.UpdateMergeRequest(project, open.pr.Number, &gitlab.UpdateMergeRequestOptions{
			Title: &c.Title, Description: &c.Body,
		}, gitlab.WithContext(ctx))
		if err != nil {
			return PullRequest{}, g.err(fmt.Sprintf("PUT projects/%s/merge_requests/%d", pid, open.pr.Number), resp, err)
		}
	} else {
		mr, resp, err = g.Client.MergeRequests.CreateMergeRequest(project, &gitlab.CreateMergeRequestOptions{
			SourceBranch: &branch, TargetBranch: &c.Base, Title: &c.Title, Description: &c.Body,
		}, gitlab.WithContext(ctx))
		if err != nil {
			return PullRequest{}, g.err(fmt.Sprintf("POST projects/%s/merge_requests", pid), resp, err)
		}
	}
	p := gitlabPullRequest(&mr.BasicMergeRequest)
	p.Head = made.ID
	return p, nil
}

// self is the token's user ID (GET /user), once per instance and token.
func (g *GitLab) self(ctx context.Context) (string, error) {
	return g.Identities.of(g.Client.BaseURL().String(), g.Token, func() (string, error) {
		u, resp, err := g.Client.Users.CurrentUser(gitlab.WithContext(ctx))
		if err != nil {
			return "", g.err("GET user", resp, err)
		}
		if u.ID == 0 {
			return "", nil
		}
		return strconv.FormatInt(u.ID, 10), nil
	})
}

// find are the merge requests from a branch named branch (of the project
// or of a fork) in state ("" any), newest first, the newest 50.
func (g *GitLab) find(ctx context.Context, project, branch, state string) ([]candidate, error) {
	opt := &gitlab.ListProjectMergeRequestsOptions{
		ListOptions:  gitlab.ListOptions{PerPage: 50},
		SourceBranch: &branch, OrderBy: new("created_at"), Sort: new("desc"),
	}
	if state != "" {
		opt.State = &state
	}
	mrs, resp, err := g.Client.MergeRequests.ListProjectMergeRequests(project, opt, gitlab.WithContext(ctx))
	if err != nil {
		return nil, g.err(fmt.Sprintf("GET projects/%s/merge_requests", gitlab.PathEscape(project)), resp, err)
	}
	cands := make([]candidate, 0, len(mrs))
	for _, mr := range mrs {
		cands = append(cands, gitlabCandidate(mr))
	}
	return cands, nil
}

func gitlabCandidate(mr *gitlab.BasicMergeRequest) candidate {
	c := candidate{pr: gitlabPullRequest(mr), base: mr.TargetBranch, head: mr.SourceBranch,
		sameRepo: mr.SourceProjectID != 0 && mr.SourceProjectID == mr.TargetProjectID}
	if mr.Author != nil {
		c.author, c.authorName = strconv.FormatInt(mr.Author.ID, 10), mr.Author.Username
	}
	return c
}

func (g *GitLab) Open(ctx context.Context, owner, repo, prefix string) (map[string]PullRequest, error) {
	me, err := g.self(ctx)
	if err != nil {
		return nil, err
	}
	project := owner + "/" + repo
	opt := &gitlab.ListProjectMergeRequestsOptions{
		ListOptions: gitlab.ListOptions{PerPage: 100, Page: 1},
		State:       new("opened"), OrderBy: new("created_at"), Sort: new("desc"),
	}
	var cands []candidate
	for range maxOpenPages {
		mrs, resp, err := g.Client.MergeRequests.ListProjectMergeRequests(project, opt, gitlab.WithContext(ctx))
		if err != nil {
			return nil, g.err(fmt.Sprintf("GET projects/%s/merge_requests?state=opened", gitlab.PathEscape(project)), resp, err)
		}
		for _, mr := range mrs {
			cands = append(cands, gitlabCandidate(mr))
		}
		if resp.NextPage == 0 {
			return openByKey(me, prefix, cands), nil
		}
		opt.Page = resp.NextPage
	}
	return nil, fmt.Errorf("gitlab: GET projects/%s/merge_requests?state=opened: more than %d pages: %w", gitlab.PathEscape(project), maxOpenPages, ErrTooManyOpen)
}

func (g *GitLab) Last(ctx context.Context, owner, repo, key string) (*PullRequest, error) {
	branch, err := branchOf(key)
	if err != nil {
		return nil, err
	}
	me, err := g.self(ctx)
	if err != nil {
		return nil, err
	}
	cands, err := g.find(ctx, owner+"/"+repo, branch, "")
	if err != nil {
		return nil, err
	}
	return last(me, cands), nil
}

// boundedBuffer takes at most MaxFileBytes, so that client-go stops
// copying a larger body. It has no ReadFrom (bytes.Buffer's would take
// everything), so io.Copy calls Write.
type boundedBuffer struct {
	buf  bytes.Buffer
	over bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > MaxFileBytes {
		b.over = true
		return 0, ErrTooLarge
	}
	return b.buf.Write(p)
}

func (g *GitLab) File(ctx context.Context, owner, repo, ref, path string) ([]byte, error) {
	// GetRawFile reads the whole body; the request is built here to
	// bound it.
	p := fmt.Sprintf("projects/%s/repository/files/%s/raw", gitlab.PathEscape(owner+"/"+repo), gitlab.PathEscape(path))
	what := "GET " + p + "?ref=" + ref
	req, err := g.Client.NewRequest(http.MethodGet, p, &gitlab.GetRawFileOptions{Ref: &ref}, []gitlab.RequestOptionFunc{gitlab.WithContext(ctx)})
	if err != nil {
		return nil, fmt.Errorf("gitlab: %s: %w", what, err)
	}
	var buf boundedBuffer
	resp, err := g.Client.Do(req, &buf)
	switch {
	case buf.over:
		return nil, fmt.Errorf("gitlab: %s: more than %d bytes: %w", what, MaxFileBytes, ErrTooLarge)
	case notFound(resp):
		return nil, fmt.Errorf("gitlab: %s: %w", what, ErrNotFound)
	case err != nil:
		return nil, g.err(what, resp, err)
	}
	return buf.buf.Bytes(), nil
}

func (g *GitLab) Files(ctx context.Context, owner, repo, ref, dir string) ([]string, error) {
	project := owner + "/" + repo
	what := fmt.Sprintf("GET projects/%s/repository/tree", gitlab.PathEscape(project))
	opt := &gitlab.ListTreeOptions{Ref: &ref, Recursive: new(true), ListOptions: gitlab.ListOptions{PerPage: 100, Page: 1}}
	if d := cleanDir(dir); d != "" {
		opt.Path = &d // listed by GitLab; a directory it does not have is a 404
	}
	var paths []string
	for page := 1; ; page++ {
		if page > gitlabTreePages {
			return nil, fmt.Errorf("gitlab: %s: more than %d pages: %w", what, gitlabTreePages, ErrTooLarge)
		}
		nodes, resp, err := g.Client.Repositories.ListTree(project, opt, gitlab.WithContext(ctx))
		if err != nil {
			if notFound(resp) || errors.Is(err, gitlab.ErrNotFound) {
				return nil, fmt.Errorf("gitlab: %s: %q on %q: %w", what, dir, ref, ErrNotFound)
			}
			return nil, g.err(what, resp, err)
		}
		for _, n := range nodes {
			if n.Type == "blob" && under(n.Path, dir) {
				paths = append(paths, n.Path)
			}
		}
		if len(paths) > MaxFiles {
			return nil, fmt.Errorf("gitlab: %s: more than %d files under %q: %w", what, MaxFiles, dir, ErrTooLarge)
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	slices.Sort(paths)
	return paths, nil
}

func (g *GitLab) DefaultBranch(ctx context.Context, owner, repo string) (string, error) {
	project := owner + "/" + repo
	what := "GET projects/" + gitlab.PathEscape(project)
	p, resp, err := g.Client.Projects.GetProject(project, nil, gitlab.WithContext(ctx))
	if err != nil {
		return "", g.err(what, resp, err)
	}
	return defaultBranch("gitlab: "+what, p.DefaultBranch)
}

func gitlabPullRequest(mr *gitlab.BasicMergeRequest) PullRequest {
	p := PullRequest{Number: mr.IID, URL: mr.WebURL, State: Open, Head: mr.SHA}
	switch mr.State {
	case "merged":
		p.State = Merged
		if mr.MergedAt != nil {
			p.ClosedAt = *mr.MergedAt
		}
	case "closed":
		p.State = Closed
		if mr.ClosedAt != nil {
			p.ClosedAt = *mr.ClosedAt
		}
	}
	return p
}
