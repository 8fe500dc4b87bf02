package gitstatus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

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
	return &gitlabProvider{client: client, base: base, token: h.Token}, nil
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
		Description: gitlab.Ptr(truncateDescription(s.Description)),
	}
	if s.TargetURL != "" {
		opt.TargetURL = gitlab.Ptr(s.TargetURL)
	}
	_, resp, err := p.client.Commits.SetCommitStatus(project, sha, opt, gitlab.WithContext(ctx))
	if err == nil {
		return nil
	}
	op := fmt.Sprintf("gitlab: POST projects/%s/statuses/%s", gitlab.PathEscape(project), sha)
	if resp == nil || resp.Response == nil {
		return transportError(op, err, p.token)
	}
	var detail string
	var er *gitlab.ErrorResponse
	if errors.As(err, &er) {
		detail = er.Message
	} else if errors.Is(err, gitlab.ErrNotFound) {
		// client-go answers 404 with ErrNotFound, dropping GitLab's body.
		detail = "no such project or commit, or the token cannot see it"
	}
	// GitLab refuses to set the state a status already has ("Cannot
	// transition status via :enqueue from :pending", 400). The commit shows
	// the state asked for, which is what posting meant to achieve; this
	// happens when a status is posted again after a restart.
	if resp.StatusCode == http.StatusBadRequest && strings.Contains(detail, "Cannot transition status") {
		return nil
	}
	return httpStatusError(op, resp.StatusCode, resp.Header, detail, p.token)
}
