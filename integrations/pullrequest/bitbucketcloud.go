package pullrequest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// BitbucketCloud proposes through the Bitbucket Cloud REST API (2.0). Its
// commit endpoint (POST .../src) writes every file in one commit but can
// only add to an existing branch, so the proposal's branch is deleted
// first and made again from the base's head. Open pull requests are
// searched before (another user's from the branch leaves it untouched) and
// again after: should the deletion decline claimwarden's, the second
// search finds none open and creates a new one, never two open.
type BitbucketCloud struct{ b bitbucketHTTP }

func cloudRepo(owner, repo string) (string, error) {
	if owner == "" || strings.Contains(owner, "/") {
		return "", fmt.Errorf("bitbucket-cloud: %q is not a workspace", owner)
	}
	return "/2.0/repositories/" + url.PathEscape(owner) + "/" + url.PathEscape(repo), nil
}

// cloudPullRequest is the part of a pull request read.
type cloudPullRequest struct {
	ID     int64  `json:"id"`
	State  string `json:"state"` // OPEN, MERGED, DECLINED, SUPERSEDED
	Author struct {
		UUID        string `json:"uuid"`
		DisplayName string `json:"display_name"`
	} `json:"author"`
	// Source.Commit.Hash is abbreviated (12 hex digits) in pull requests.
	Source      cloudEnd `json:"source"`
	Destination cloudEnd `json:"destination"`
	// UpdatedOn is the closing time of a merged or declined one: the API
	// has no closed_on, and a closed pull request is rarely updated.
	UpdatedOn time.Time `json:"updated_on"`
	Links     struct {
		HTML struct {
			Href string `json:"href"`
		} `json:"html"`
	} `json:"links"`
}

// cloudEnd is a pull request's source or destination.
type cloudEnd struct {
	Branch struct {
		Name string `json:"name"`
	} `json:"branch"`
	Commit struct {
		Hash string `json:"hash"`
	} `json:"commit"`
	Repository struct {
		UUID string `json:"uuid"`
	} `json:"repository"`
}

func (p cloudPullRequest) pullRequest() PullRequest {
	pr := PullRequest{Number: p.ID, URL: p.Links.HTML.Href, State: Open, Head: p.Source.Commit.Hash}
	switch p.State {
	case "MERGED":
		pr.State, pr.ClosedAt = Merged, p.UpdatedOn
	case "DECLINED", "SUPERSEDED":
		pr.State, pr.ClosedAt = Closed, p.UpdatedOn
	}
	return pr
}

func (c *BitbucketCloud) Propose(ctx context.Context, ch Change) (PullRequest, error) {
	branch, err := branchOf(ch.Key)
	if err != nil {
		return PullRequest{}, err
	}
	repo, err := cloudRepo(ch.Owner, ch.Repo)
	if err != nil {
		return PullRequest{}, err
	}
	me, err := c.self(ctx)
	if err != nil {
		return PullRequest{}, err
	}
	cands, err := c.find(ctx, repo, branch, "OPEN")
	if err != nil {
		return PullRequest{}, err
	}
	if _, err := mine(me, branch, ch.Base, cands); err != nil {
		return PullRequest{}, fmt.Errorf("bitbucket-cloud: %s: %w", repo, err)
	}
	var base struct {
		Target struct {
			Hash string `json:"hash"`
		} `json:"target"`
	}
	if _, err := c.b.Call(ctx, http.MethodGet, repo+"/refs/branches/"+escapeSegments(ch.Base), "", nil, &base); err != nil {
		return PullRequest{}, err
	}
	ref := repo + "/refs/branches/" + escapeSegments(branch)
	code, err := c.b.Call(ctx, http.MethodGet, ref, "", nil, nil, http.StatusNotFound)
	if err != nil {
		return PullRequest{}, err
	}
	if code != http.StatusNotFound {
		if _, err := c.b.Call(ctx, http.MethodDelete, ref, "", nil, nil); err != nil {
			return PullRequest{}, err
		}
	}
	// A branch that does not exist is created on the parent given.
	fields := [][2]string{{"message", ch.Message}, {"branch", branch}, {"parents", base.Target.Hash}}
	for _, f := range ch.Files {
		fields = append(fields, [2]string{f.Path, string(f.Content)})
	}
	form, contentType, err := multipartForm(fields)
	if err != nil {
		return PullRequest{}, fmt.Errorf("bitbucket-cloud: POST %s/src: %w", repo, err)
	}
	head, err := c.commit(ctx, repo+"/src", contentType, form)
	if err != nil {
		return PullRequest{}, err
	}
	cands, err = c.find(ctx, repo, branch, "OPEN")
	if err != nil {
		return PullRequest{}, err
	}
	open, err := mine(me, branch, ch.Base, cands)
	if err != nil {
		return PullRequest{}, fmt.Errorf("bitbucket-cloud: %s: %w", repo, err)
	}
	var pr cloudPullRequest
	if open != nil {
		_, err = c.b.CallJSON(ctx, http.MethodPut, fmt.Sprintf("%s/pullrequests/%d", repo, open.pr.Number),
			map[string]string{"title": ch.Title, "description": ch.Body}, &pr)
	} else {
		_, err = c.b.CallJSON(ctx, http.MethodPost, repo+"/pullrequests", map[string]any{
			"title": ch.Title, "description": ch.Body,
			"source":      map[string]any{"branch": map[string]string{"name": branch}},
			"destination": map[string]any{"branch": map[string]string{"name": ch.Base}},
		}, &pr)
	}
	if err != nil {
		return PullRequest{}, err
	}
	p := pr.pullRequest()
	p.Head = head
	return p, nil
}

// commit posts the form to path (POST .../src) and returns the commit
// made, which the answer's Location names (.../commit/<hash>).
func (c *BitbucketCloud) commit(ctx context.Context, path, contentType string, form []byte) (string, error) {
	op := c.b.Op(http.MethodPost, path)
	resp, data, err := c.b.Send(ctx, http.MethodPost, path, contentType, form, githost.MaxAnswerBytes)
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", c.b.Refused(op, resp, data, nil)
	}
	_, hash, ok := strings.Cut(resp.Header.Get("Location"), "/commit/")
	if !ok || hash == "" || strings.Contains(hash, "/") {
		return "", fmt.Errorf("%s: the answer's Location %q names no commit", op, resp.Header.Get("Location"))
	}
	return hash, nil
}

// self is the token's account UUID (GET /2.0/user), once per host and
// token.
func (c *BitbucketCloud) self(ctx context.Context) (string, error) {
	return c.b.ids.of(c.b.API, c.b.Token, func() (string, error) {
		var u struct {
			UUID string `json:"uuid"`
		}
		if _, err := c.b.Call(ctx, http.MethodGet, "/2.0/user", "", nil, &u); err != nil {
			return "", err
		}
		return u.UUID, nil
	})
}

// find are the pull requests from a branch named branch (of the
// repository or of a fork) in one of states, newest first, the newest 50.
func (c *BitbucketCloud) find(ctx context.Context, repo, branch string, states ...string) ([]candidate, error) {
	q := url.Values{"q": {fmt.Sprintf("source.branch.name=%q", branch)}, "state": states, "sort": {"-created_on"}, "pagelen": {"50"}}
	var page struct {
		Values []cloudPullRequest `json:"values"`
	}
	if _, err := c.b.Call(ctx, http.MethodGet, repo+"/pullrequests?"+q.Encode(), "", nil, &page); err != nil {
		return nil, err
	}
	cands := make([]candidate, 0, len(page.Values))
	for _, p := range page.Values {
		cands = append(cands, p.candidate())
	}
	return cands, nil
}

func (p cloudPullRequest) candidate() candidate {
	src, dst := p.Source.Repository.UUID, p.Destination.Repository.UUID
	return candidate{pr: p.pullRequest(), author: p.Author.UUID, authorName: p.Author.DisplayName,
		sameRepo: src != "" && src == dst, base: p.Destination.Branch.Name, head: p.Source.Branch.Name}
}

// Open lists the open pull requests from branches whose name holds
// BranchPrefix+prefix (BBQL's ~; the prefix is checked after), following
// the next links on the API's host.
func (c *BitbucketCloud) Open(ctx context.Context, owner, repo, prefix string) (map[string]PullRequest, error) {
	path, err := cloudRepo(owner, repo)
	if err != nil {
		return nil, err
	}
	me, err := c.self(ctx)
	if err != nil {
		return nil, err
	}
	q := url.Values{"q": {fmt.Sprintf("source.branch.name ~ %q", BranchPrefix+prefix)}, "state": {"OPEN"}, "sort": {"-created_on"}, "pagelen": {"50"}}
	next := path + "/pullrequests?" + q.Encode()
	var cands []candidate
	for range maxOpenPages {
		var page struct {
			Values []cloudPullRequest `json:"values"`
			Next   string             `json:"next"`
		}
		if _, err := c.b.Call(ctx, http.MethodGet, next, "", nil, &page); err != nil {
			return nil, err
		}
		for _, p := range page.Values {
			cands = append(cands, p.candidate())
		}
		if page.Next == "" {
			return openByKey(me, prefix, cands), nil
		}
		if next, err = c.nextPage(next, page.Next); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: more than %d pages: %w", c.b.Op(http.MethodGet, path+"/pullrequests"), maxOpenPages, ErrTooManyOpen)
}

func (c *BitbucketCloud) Last(ctx context.Context, owner, repo, key string) (*PullRequest, error) {
	branch, err := branchOf(key)
	if err != nil {
		return nil, err
	}
	path, err := cloudRepo(owner, repo)
	if err != nil {
		return nil, err
	}
	me, err := c.self(ctx)
	if err != nil {
		return nil, err
	}
	// Without state the API lists open pull requests only.
	cands, err := c.find(ctx, path, branch, "OPEN", "MERGED", "DECLINED", "SUPERSEDED")
	if err != nil {
		return nil, err
	}
	return last(me, cands), nil
}

func (c *BitbucketCloud) File(ctx context.Context, owner, repo, ref, path string) ([]byte, error) {
	r, err := cloudRepo(owner, repo)
	if err != nil {
		return nil, err
	}
	return c.b.raw(ctx, r+"/src/"+url.PathEscape(ref)+"/"+escapeSegments(path))
}

func (c *BitbucketCloud) Files(ctx context.Context, owner, repo, ref, dir string) ([]string, error) {
	r, err := cloudRepo(owner, repo)
	if err != nil {
		return nil, err
	}
	d := cleanDir(dir)
	// max_depth lists subdirectories' files too; pages are followed by the
	// next link, kept on the API's host (the token goes with it).
	path := r + "/src/" + url.PathEscape(ref) + "/" + escapeSegments(d)
	if d != "" {
		path += "/"
	}
	path += "?" + url.Values{"max_depth": {"100"}, "pagelen": {"100"}}.Encode()
	var paths []string
	for range maxPagesListed {
		var page struct {
			Values []struct {
				Type string `json:"type"`
				Path string `json:"path"`
			} `json:"values"`
			Next string `json:"next"`
		}
		code, err := c.b.Call(ctx, http.MethodGet, path, "", nil, &page, http.StatusNotFound)
		if err != nil {
			return nil, err
		}
		if code == http.StatusNotFound {
			return nil, fmt.Errorf("%s: %q on %q: %w", c.b.Op(http.MethodGet, path), dir, ref, ErrNotFound)
		}
		for _, v := range page.Values {
			if v.Type == "commit_file" && under(v.Path, d) {
				paths = append(paths, v.Path)
			}
		}
		if len(paths) > MaxFiles {
			return nil, fmt.Errorf("%s: more than %d files under %q: %w", c.b.Op(http.MethodGet, path), MaxFiles, dir, ErrTooLarge)
		}
		if page.Next == "" {
			slices.Sort(paths)
			return paths, nil
		}
		if path, err = c.nextPage(path, page.Next); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: more than %d pages: %w", c.b.Op(http.MethodGet, path), maxPagesListed, ErrTooLarge)
}

// nextPage is the path of a page's next link, which must be on the API's
// host (the token goes with it); path is the page's, for the error.
func (c *BitbucketCloud) nextPage(path, link string) (string, error) {
	next, ok := strings.CutPrefix(link, c.b.API)
	if !ok || !strings.HasPrefix(next, "/") {
		return "", fmt.Errorf("%s: next page %q is not on %s", c.b.Op(http.MethodGet, path), link, c.b.API)
	}
	return next, nil
}

func (c *BitbucketCloud) DefaultBranch(ctx context.Context, owner, repo string) (string, error) {
	r, err := cloudRepo(owner, repo)
	if err != nil {
		return "", err
	}
	var answer struct {
		MainBranch *struct {
			Name string `json:"name"`
		} `json:"mainbranch"`
	}
	if _, err := c.b.Call(ctx, http.MethodGet, r, "", nil, &answer); err != nil {
		return "", err
	}
	var name string
	if answer.MainBranch != nil {
		name = answer.MainBranch.Name
	}
	return defaultBranch(c.b.Op(http.MethodGet, r), name)
}
