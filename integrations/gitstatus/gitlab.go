package gitstatus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// gitlabProvider posts through client-go's Commits.SetCommitStatus:
// POST /api/v4/projects/{id}/statuses/{sha}, the project ID being the
// URL-encoded full path (group%2Fsubgroup%2Fname), so nested groups need no
// project-ID lookup.
type gitlabProvider struct {
	client *gitlab.Client
	base   *url.URL
	token  string
}

// gitlabStates maps the package's states onto GitLab's pipeline-status
// words: GitLab has no "error", and "failed" is what blocks a merge request
// that requires a successful pipeline.
var gitlabStates = map[State]gitlab.BuildStateValue{
	Pending: gitlab.Pending,
	Success: gitlab.Success,
	Failure: gitlab.Failed,
	Error:   gitlab.Failed,
}

// noWait is a client-go RateLimiter that never waits.
type noWait struct{}

func (noWait) Wait(context.Context) error { return nil }

func newGitLabProvider(base *url.URL, h Host, hc *http.Client) (Provider, error) {
	client, err := newGitLabClient(base, h, hc)
	if err != nil {
		return nil, err
	}
	return &gitlabProvider{client: client, base: base, token: h.Token}, nil
}

// NewGitLabClient returns a client-go client for h (type gitlab), with the
// API URL, token and HTTP client the status provider uses, for other
// integrations (merge-request notes). Like the provider's, it neither
// retries nor paces: callers see every refusal, Retry-After included.
// hc nil means a client with DefaultHTTPTimeout. It makes no request. Pass
// its errors through GitLabError; a project is named by Host.RepositoryPath.
func NewGitLabClient(h Host, hc *http.Client) (*gitlab.Client, error) {
	base, hc, err := CheckHost(h, hc)
	if err != nil {
		return nil, err
	}
	if h.Type != GitLab {
		return nil, fmt.Errorf("git host %s: type %q is not %q", base.Redacted(), h.Type, GitLab)
	}
	return newGitLabClient(base, h, hc)
}

func newGitLabClient(base *url.URL, h Host, hc *http.Client) (*gitlab.Client, error) {
	// NewClient authenticates with "PRIVATE-TOKEN: <token>", which personal,
	// group and project access tokens all accept.
	client, err := gitlab.NewClient(h.Token,
		gitlab.WithBaseURL(base.String()+"/api/v4/"),
		gitlab.WithHTTPClient(hc),
		// The Reporter owns retries and pacing: client-go's own retries
		// (5, on 429 and 5xx) would hold a worker and hide the Retry-After
		// it must see, and its client-side limiter would block a worker
		// waiting for a token instead of reporting the limit.
		gitlab.WithoutRetries(),
		gitlab.WithCustomLimiter(noWait{}),
	)
	if err != nil {
		return nil, fmt.Errorf("git host %s: %w", base.Redacted(), err)
	}
	return client, nil
}

func (p *gitlabProvider) Post(ctx context.Context, repo Repository, sha string, s Status) error {
	if err := validateStatus(sha, s); err != nil {
		return err
	}
	project := stripBasePath(p.base, repo.Path)
	opt := &gitlab.SetCommitStatusOptions{
		State: gitlabStates[s.State],
		// "name" is GitLab's context: statuses with the same name on a
		// commit replace each other.
		Name:        gitlab.Ptr(s.Context),
		Description: gitlab.Ptr(outcome.ShortDescription(s.Description)),
	}
	if s.TargetURL != "" {
		opt.TargetURL = gitlab.Ptr(s.TargetURL)
	}
	_, resp, err := p.client.Commits.SetCommitStatus(project, sha, opt, gitlab.WithContext(ctx))
	if err == nil {
		return nil
	}
	// GitLab refuses to set the state a status already has ("Cannot
	// transition status via :enqueue from :pending", 400). The commit shows
	// the state asked for, which is what posting meant to achieve; this
	// happens when a status is posted again after a restart.
	if resp != nil && resp.Response != nil && resp.StatusCode == http.StatusBadRequest &&
		strings.Contains(gitlabDetail(err), "Cannot transition status") {
		return nil
	}
	op := fmt.Sprintf("gitlab: POST projects/%s/statuses/%s", gitlab.PathEscape(project), sha)
	return GitLabError(op, resp, err, p.token)
}

// Shows implements StatusReader through client-go's
// Commits.GetCommitStatuses:
// GET /api/v4/projects/{id}/repository/commits/{sha}/statuses?name={context}&order_by=id&sort=desc&per_page=100.
// Without ref (which Post does not send either) GitLab searches every
// pipeline of the commit; without all it lists the latest status of each
// pipeline, and the newest is never a retried one. GitLab sorts by ID
// descending since 17.8 and ascending before, ignoring sort: the highest ID
// of the page is taken either way, the page holding one status per
// pipeline of the commit.
func (p *gitlabProvider) Shows(ctx context.Context, repo Repository, sha string, s Status) (bool, error) {
	if err := validateStatus(sha, s); err != nil {
		return false, err
	}
	project := stripBasePath(p.base, repo.Path)
	opt := &gitlab.GetCommitStatusesOptions{
		ListOptions: gitlab.ListOptions{PerPage: 100, OrderBy: "id", Sort: "desc"},
		Name:        gitlab.Ptr(s.Context),
	}
	statuses, resp, err := p.client.Commits.GetCommitStatuses(project, sha, opt, gitlab.WithContext(ctx))
	if err != nil {
		op := fmt.Sprintf("gitlab: GET projects/%s/repository/commits/%s/statuses", gitlab.PathEscape(project), sha)
		return false, GitLabError(op, resp, err, p.token)
	}
	var newest *gitlab.CommitStatus
	for _, st := range statuses {
		if st != nil && st.Name == s.Context && (newest == nil || st.ID > newest.ID) {
			newest = st
		}
	}
	if newest == nil {
		return false, nil
	}
	return newest.Status == string(gitlabStates[s.State]) && newest.Description == outcome.ShortDescription(s.Description), nil
}

// GitLabError maps an error of a client-go call onto the package's
// classification (see classify.go), naming op ("gitlab: POST
// projects/g%2Fname/...") and with token scrubbed.
func GitLabError(op string, resp *gitlab.Response, err error, token string) error {
	switch {
	case resp == nil || resp.Response == nil:
		return transportError(op, err, token)
	case resp.StatusCode/100 == 2:
		return undecodedError(op, resp.StatusCode, err, token)
	}
	return httpStatusError(op, resp.StatusCode, resp.Header, gitlabDetail(err), token)
}

// gitlabDetail is what GitLab said in an error answer.
func gitlabDetail(err error) string {
	var er *gitlab.ErrorResponse
	if errors.As(err, &er) {
		return er.Message
	}
	if errors.Is(err, gitlab.ErrNotFound) {
		// client-go answers 404 with ErrNotFound, dropping GitLab's body.
		return "no such project or object, or the token cannot see it"
	}
	return ""
}
