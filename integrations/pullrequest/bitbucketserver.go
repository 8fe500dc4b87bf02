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

	"github.com/claimwarden/claimwarden/integrations/gitstatus"
)

// BitbucketServer proposes through the Bitbucket Server / Data Center REST
// API. Its file edit endpoint (PUT .../browse/{path}) commits one file at a
// time, so a proposal of n files is n commits; the branch-utils API cannot
// move a branch, so the proposal's branch is deleted and made again from
// the base's head. (Should the deletion decline the open pull request, the
// search that follows finds none open and creates a new one: never two.)
type BitbucketServer struct{ b bitbucketHTTP }

// NewBitbucketServer talks to the instance at base (its context path kept).
func NewBitbucketServer(base *url.URL, token string, hc *http.Client) *BitbucketServer {
	return &BitbucketServer{b: bitbucketHTTP{name: "bitbucket-server", api: strings.TrimRight(base.String(), "/"),
		token: token, hc: hc, classify: gitstatus.BitbucketServerError}}
}

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
	Links      struct {
		Self []struct {
			Href string `json:"href"`
		} `json:"self"`
	} `json:"links"`
}

func (p serverPullRequest) pullRequest() PullRequest {
	pr := PullRequest{Number: p.ID, State: Open}
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
	var commits struct {
		Values []struct {
			ID string `json:"id"`
		} `json:"values"`
	}
	q := url.Values{"until": {"refs/heads/" + c.Base}, "limit": {"1"}}
	if _, err := s.b.call(ctx, http.MethodGet, api+"/commits?"+q.Encode(), "", nil, &commits); err != nil {
		return PullRequest{}, err
	}
	if len(commits.Values) == 0 {
		return PullRequest{}, fmt.Errorf("%s: branch %q has no commit", s.b.op(http.MethodGet, api+"/commits"), c.Base)
	}
	head := commits.Values[0].ID
	branches := "/rest/branch-utils/1.0" + repo + "/branches"
	if _, err := s.b.callJSON(ctx, http.MethodDelete, branches, map[string]any{"name": "refs/heads/" + branch, "dryRun": false}, nil, http.StatusNotFound); err != nil {
		return PullRequest{}, err
	}
	if _, err := s.b.callJSON(ctx, http.MethodPost, branches, map[string]string{"name": branch, "startPoint": head}, nil); err != nil {
		return PullRequest{}, err
	}
	base := head
	for _, f := range c.Files {
		path := api + "/browse/" + escapeSegments(f.Path)
		// sourceCommitId is sent for a file the base has (Bitbucket then
		// checks nobody changed it since), not for a new one.
		code, err := s.b.call(ctx, http.MethodGet, path+"?"+url.Values{"at": {base}, "type": {"true"}}.Encode(), "", nil, nil, http.StatusNotFound)
		if err != nil {
			return PullRequest{}, err
		}
		fields := [][2]string{{"content", string(f.Content)}, {"message", c.Message}, {"branch", branch}}
		if code != http.StatusNotFound {
			fields = append(fields, [2]string{"sourceCommitId", head})
		}
		form, contentType, err := multipartForm(fields)
		if err != nil {
			return PullRequest{}, fmt.Errorf("%s: %w", s.b.op(http.MethodPut, path), err)
		}
		var made struct {
			ID string `json:"id"`
		}
		if _, err := s.b.call(ctx, http.MethodPut, path, contentType, form, &made); err != nil {
			return PullRequest{}, err
		}
		head = made.ID
	}
	open, err := s.find(ctx, api, branch, "OPEN")
	if err != nil {
		return PullRequest{}, err
	}
	var pr serverPullRequest
	if open != nil {
		_, err = s.b.callJSON(ctx, http.MethodPut, api+"/pull-requests/"+strconv.FormatInt(open.ID, 10),
			map[string]any{"title": c.Title, "description": c.Body, "version": open.Version}, &pr)
	} else {
		_, err = s.b.callJSON(ctx, http.MethodPost, api+"/pull-requests", map[string]any{
			"title": c.Title, "description": c.Body,
			"fromRef": map[string]string{"id": "refs/heads/" + branch}, "toRef": map[string]string{"id": "refs/heads/" + c.Base},
		}, &pr)
	}
	if err != nil {
		return PullRequest{}, err
	}
	return pr.pullRequest(), nil
}

// find is the newest pull request from branch in state, nil when none.
func (s *BitbucketServer) find(ctx context.Context, api, branch, state string) (*serverPullRequest, error) {
	q := url.Values{"at": {"refs/heads/" + branch}, "state": {state}, "direction": {"OUTGOING"}, "order": {"NEWEST"}, "limit": {"1"}}
	var page struct {
		Values []serverPullRequest `json:"values"`
	}
	if _, err := s.b.call(ctx, http.MethodGet, api+"/pull-requests?"+q.Encode(), "", nil, &page); err != nil {
		return nil, err
	}
	if len(page.Values) == 0 {
		return nil, nil
	}
	return &page.Values[0], nil
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
	p, err := s.find(ctx, "/rest/api/1.0"+r, branch, "ALL")
	if err != nil || p == nil {
		return nil, err
	}
	pr := p.pullRequest()
	return &pr, nil
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
		code, err := s.b.call(ctx, http.MethodGet, path+"?"+q.Encode(), "", nil, &page, http.StatusNotFound)
		if err != nil {
			return nil, err
		}
		if code == http.StatusNotFound {
			return nil, fmt.Errorf("%s: %q on %q: %w", s.b.op(http.MethodGet, path), dir, ref, ErrNotFound)
		}
		for _, v := range page.Values {
			if d != "" {
				v = d + "/" + v
			}
			paths = append(paths, v)
		}
		if len(paths) > MaxFiles {
			return nil, fmt.Errorf("%s: more than %d files under %q: %w", s.b.op(http.MethodGet, path), MaxFiles, dir, ErrTooLarge)
		}
		if page.IsLastPage || page.NextPageStart <= start {
			slices.Sort(paths)
			return paths, nil
		}
		start = page.NextPageStart
	}
	return nil, fmt.Errorf("%s: more than %d pages: %w", s.b.op(http.MethodGet, path), maxPagesListed, ErrTooLarge)
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
	if _, err := s.b.call(ctx, http.MethodGet, path, "", nil, &answer); err != nil {
		return "", err
	}
	return defaultBranch(s.b.op(http.MethodGet, path), answer.DisplayID)
}
