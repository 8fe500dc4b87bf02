package pullrequest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// BitbucketServer proposes through the Bitbucket Server / Data Center REST
// API. Its file edit endpoint (PUT .../browse/{path}) commits one file at a
// time, so a proposal of n files is n commits; the branch-utils API cannot
// move a branch, so the proposal's branch is deleted and made again from
// the base's head. Open pull requests are searched before (another user's
// from the branch leaves it untouched) and again after: should the
// deletion decline claimwarden's, the second search finds none open and
// creates a new one, never two.
type BitbucketServer struct{ b bitbucketHTTP }

// serverRepo is the repository's path under api/1.0 or branch-utils/1.0.
func serverRepo(owner, repo string) (string, error) {
	if owner == "" || strings.Contains(owner, "/") {
		return "", fmt.Errorf("bitbucket-server: %q is not a project key", owner)
	}
	return "/projects/" + url.PathEscape(owner) + "/repos/" + url.PathEscape(repo), nil
}

type serverPullRequest struct {
	ID         int64  `json:"id"`
	Version    int64  `json:"version"`
	State      string `json:"state"`      // OPEN, MERGED, DECLINED
	ClosedDate int64  `json:"closedDate"` // milliseconds since the epoch
	Author     struct {
		User struct {
			Name string `json:"name"`
		} `json:"user"`
	} `json:"author"`
	FromRef serverRef `json:"fromRef"`
	ToRef   serverRef `json:"toRef"`
	Links   struct {
		Self []struct {
			Href string `json:"href"`
		} `json:"self"`
	} `json:"links"`
}

// serverRef is a pull request's fromRef or toRef.
type serverRef struct {
	DisplayID    string `json:"displayId"`
	LatestCommit string `json:"latestCommit"`
	Repository   struct {
		ID int64 `json:"id"`
	} `json:"repository"`
}

func (p serverPullRequest) pullRequest() PullRequest {
	pr := PullRequest{Number: p.ID, State: Open, Head: p.FromRef.LatestCommit}
	if len(p.Links.Self) > 0 {
		pr.URL = p.Links.Self[0].Href
	}
	switch p.State {
	case "MERGED":
		pr.State = Merged
	case "DECLINED":
		pr.State = Closed
	}
	if pr.State != Open && p.ClosedDate > 0 {
		pr.ClosedAt = time.UnixMilli(p.ClosedDate).UTC()
	}
	return pr
}

func (s *BitbucketServer) Propose(ctx context.Context, c Change) (PullRequest, error) {
	branch, err := branchOf(c.Key)
	if err != nil {
		return PullRequest{}, err
	}
	repo, err := serverRepo(c.Owner, c.Repo)
	if err != nil {
		return PullRequest{}, err
	}
	api := "/rest/api/1.0" + repo
	me, err := s.self(ctx)
	if err != nil {
		return PullRequest{}, err
	}
	cands, err := s.find(ctx, api, branch, "OPEN")
	if err != nil {
		return PullRequest{}, err
	}
	if _, err := mine(me, branch, c.Base, cands); err != nil {
		return PullRequest{}, fmt.Errorf("bitbucket-server: %s: %w", api, err)
	}
	var commits struct {
		Values []struct {
			ID string `json:"id"`
		} `json:"values"`
	}
	q := url.Values{"until": {"refs/heads/" + c.Base}, "limit": {"1"}}
	if _, err := s.b.Call(ctx, http.MethodGet, api+"/commits?"+q.Encode(), "", nil, &commits); err != nil {
		return PullRequest{}, err
	}
	if len(commits.Values) == 0 {
		return PullRequest{}, fmt.Errorf("%s: branch %q has no commit", s.b.Op(http.MethodGet, api+"/commits"), c.Base)
	}
	head := commits.Values[0].ID
	branches := "/rest/branch-utils/1.0" + repo + "/branches"
	if _, err := s.b.CallJSON(ctx, http.MethodDelete, branches, map[string]any{"name": "refs/heads/" + branch, "dryRun": false}, nil, http.StatusNotFound); err != nil {
		return PullRequest{}, err
	}
	if _, err := s.b.CallJSON(ctx, http.MethodPost, branches, map[string]string{"name": branch, "startPoint": head}, nil); err != nil {
		return PullRequest{}, err
	}
	base := head
	for _, f := range c.Files {
		path := api + "/browse/" + escapeSegments(f.Path)
		// sourceCommitId is sent for a file the base has (Bitbucket then
		// checks nobody changed it since), not for a new one.
		code, err := s.b.Call(ctx, http.MethodGet, path+"?"+url.Values{"at": {base}, "type": {"true"}}.Encode(), "", nil, nil, http.StatusNotFound)
		if err != nil {
			return PullRequest{}, err
		}
		fields := [][2]string{{"content", string(f.Content)}, {"message", c.Message}, {"branch", branch}}
		if code != http.StatusNotFound {
			fields = append(fields, [2]string{"sourceCommitId", head})
		}
		form, contentType, err := multipartForm(fields)
		if err != nil {
			return PullRequest{}, fmt.Errorf("%s: %w", s.b.Op(http.MethodPut, path), err)
		}
		var made struct {
			ID string `json:"id"`
		}
		if _, err := s.b.Call(ctx, http.MethodPut, path, contentType, form, &made); err != nil {
			return PullRequest{}, err
		}
		head = made.ID
	}
	cands, err = s.find(ctx, api, branch, "OPEN")
	if err != nil {
		return PullRequest{}, err
	}
	open, err := mine(me, branch, c.Base, cands)
	if err != nil {
		return PullRequest{}, fmt.Errorf("bitbucket-server: %s: %w", api, err)
	}
	var pr serverPullRequest
	if open != nil {
		_, err = s.b.CallJSON(ctx, http.MethodPut, api+"/pull-requests/"+strconv.FormatInt(open.pr.Number, 10),
			map[string]any{"title": c.Title, "description": c.Body, "version": open.version}, &pr)
	} else {
		_, err = s.b.CallJSON(ctx, http.MethodPost, api+"/pull-requests", map[string]any{
			"title": c.Title, "description": c.Body,
			"fromRef": map[string]string{"id": "refs/heads/" + branch}, "toRef": map[string]string{"id": "refs/heads/" + c.Base},
		}, &pr)
	}
	if err != nil {
		return PullRequest{}, err
	}
	p := pr.pullRequest()
	p.Head = head
	return p, nil
}

// self is the token's user name, once per instance and token: the
// X-AUSERNAME header Bitbucket Server answers authenticated requests with,
// else the body of /plugins/servlet/applinks/whoami, which is that name.
func (s *BitbucketServer) self(ctx context.Context) (string, error) {
	return s.b.ids.of(s.b.API, s.b.Token, func() (string, error) {
		const path = "/plugins/servlet/applinks/whoami"
		op := s.b.Op(http.MethodGet, path)
		resp, data, err := s.b.Send(ctx, http.MethodGet, path, "", nil, 1024)
		if err != nil {
			return "", err
		}
		if resp.StatusCode/100 != 2 {
			return "", s.b.Refused(op, resp, data, nil)
		}
		if name := resp.Header.Get("X-AUSERNAME"); name != "" {
			return name, nil
		}
		name := strings.TrimSpace(string(data))
		if len(data) > 1024 || strings.ContainsAny(name, "\r\n<") {
			return "", fmt.Errorf("%s: the answer is no user name", op)
		}
		return name, nil
	})
}

// find are the pull requests from the repository's own branch (direction
// OUTGOING lists no fork's) in state, newest first, the newest 50.
func (s *BitbucketServer) find(ctx context.Context, api, branch, state string) ([]candidate, error) {
	q := url.Values{"at": {"refs/heads/" + branch}, "state": {state}, "direction": {"OUTGOING"}, "order": {"NEWEST"}, "limit": {"50"}}
	var page struct {
		Values []serverPullRequest `json:"values"`
	}
	if _, err := s.b.Call(ctx, http.MethodGet, api+"/pull-requests?"+q.Encode(), "", nil, &page); err != nil {
		return nil, err
	}
	cands := make([]candidate, 0, len(page.Values))
	for _, p := range page.Values {
		cands = append(cands, p.candidate())
	}
	return cands, nil
}

func (p serverPullRequest) candidate() candidate {
	from, to := p.FromRef.Repository.ID, p.ToRef.Repository.ID
	return candidate{pr: p.pullRequest(), author: p.Author.User.Name, authorName: p.Author.User.Name,
		sameRepo: from != 0 && from == to, base: p.ToRef.DisplayID, head: p.FromRef.DisplayID, version: p.Version}
}

// Open lists the repository's open pull requests from its own branches
// (direction OUTGOING), 100 a page.
func (s *BitbucketServer) Open(ctx context.Context, owner, repo, prefix string) (map[string]PullRequest, error) {
	r, err := serverRepo(owner, repo)
	if err != nil {
		return nil, err
	}
	me, err := s.self(ctx)
	if err != nil {
		return nil, err
	}
	path := "/rest/api/1.0" + r + "/pull-requests"
	var cands []candidate
	start := 0
	for range maxOpenPages {
		var page struct {
			Values        []serverPullRequest `json:"values"`
			IsLastPage    bool                `json:"isLastPage"`
			NextPageStart int                 `json:"nextPageStart"`
		}
		q := url.Values{"state": {"OPEN"}, "direction": {"OUTGOING"}, "order": {"NEWEST"}, "limit": {"100"}, "start": {strconv.Itoa(start)}}
		if _, err := s.b.Call(ctx, http.MethodGet, path+"?"+q.Encode(), "", nil, &page); err != nil {
			return nil, err
		}
		for _, p := range page.Values {
			cands = append(cands, p.candidate())
		}
		if page.IsLastPage || page.NextPageStart <= start {
			return openByKey(me, prefix, cands), nil
		}
		start = page.NextPageStart
	}
	return nil, fmt.Errorf("%s: more than %d pages: %w", s.b.Op(http.MethodGet, path), maxOpenPages, ErrTooManyOpen)
}

func (s *BitbucketServer) Last(ctx context.Context, owner, repo, key string) (*PullRequest, error) {
	branch, err := branchOf(key)
	if err != nil {
		return nil, err
	}
	r, err := serverRepo(owner, repo)
	if err != nil {
		return nil, err
	}
	me, err := s.self(ctx)
	if err != nil {
		return nil, err
	}
	cands, err := s.find(ctx, "/rest/api/1.0"+r, branch, "ALL")
	if err != nil {
		return nil, err
	}
	return last(me, cands), nil
}

func (s *BitbucketServer) File(ctx context.Context, owner, repo, ref, path string) ([]byte, error) {
	r, err := serverRepo(owner, repo)
	if err != nil {
		return nil, err
	}
	return s.b.raw(ctx, "/rest/api/1.0"+r+"/raw/"+escapeSegments(path)+"?"+url.Values{"at": {ref}}.Encode())
}

func (s *BitbucketServer) Files(ctx context.Context, owner, repo, ref, dir string) ([]string, error) {
	r, err := serverRepo(owner, repo)
	if err != nil {
		return nil, err
	}
	d := cleanDir(dir)
	path := "/rest/api/1.0" + r + "/files"
	if d != "" {
		path += "/" + escapeSegments(d)
	}
	var paths []string
	start := 0
	for range maxPagesListed {
		var page struct {
			Values        []string `json:"values"` // relative to dir
			IsLastPage    bool     `json:"isLastPage"`
			NextPageStart int      `json:"nextPageStart"`
		}
		q := url.Values{"at": {ref}, "start": {strconv.Itoa(start)}, "limit": {"1000"}}
		code, err := s.b.Call(ctx, http.MethodGet, path+"?"+q.Encode(), "", nil, &page, http.StatusNotFound)
		if err != nil {
			return nil, err
		}
		if code == http.StatusNotFound {
			return nil, fmt.Errorf("%s: %q on %q: %w", s.b.Op(http.MethodGet, path), dir, ref, ErrNotFound)
		}
		for _, v := range page.Values {
			if d != "" {
				v = d + "/" + v
			}
			paths = append(paths, v)
		}
		if len(paths) > MaxFiles {
			return nil, fmt.Errorf("%s: more than %d files under %q: %w", s.b.Op(http.MethodGet, path), MaxFiles, dir, ErrTooLarge)
		}
		if page.IsLastPage || page.NextPageStart <= start {
			slices.Sort(paths)
			return paths, nil
		}
		start = page.NextPageStart
	}
	return nil, fmt.Errorf("%s: more than %d pages: %w", s.b.Op(http.MethodGet, path), maxPagesListed, ErrTooLarge)
}

func (s *BitbucketServer) DefaultBranch(ctx context.Context, owner, repo string) (string, error) {
	r, err := serverRepo(owner, repo)
	if err != nil {
		return "", err
	}
	// displayId is the branch's name; id is its ref (refs/heads/...).
	path := "/rest/api/1.0" + r + "/default-branch"
	var answer struct {
		DisplayID string `json:"displayId"`
	}
	if _, err := s.b.Call(ctx, http.MethodGet, path, "", nil, &answer); err != nil {
		return "", err
	}
	return defaultBranch(s.b.Op(http.MethodGet, path), answer.DisplayID)
}
