package githost

import (
	"context"
	"errors"
	"fmt"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// noWait is a client-go RateLimiter that never waits.
type noWait struct{}

func (noWait) Wait(context.Context) error { return nil }

// GitLab returns a client-go client for h (type gitlab), with its API URL
// and token. It neither retries nor paces: callers see every refusal,
// Retry-After included. It makes no request. Pass its errors through
// GitLabError; a project is named by Host.RepositoryPath.
func (c Clients) GitLab(h Host) (*gitlab.Client, error) {
	base, hc, err := c.check(h, GitLab)
	if err != nil {
		return nil, err
	}
	// NewClient authenticates with "PRIVATE-TOKEN: <token>", which personal,
	// group and project access tokens all accept.
	client, err := gitlab.NewClient(h.Token,
		gitlab.WithBaseURL(base.String()+"/api/v4/"),
		gitlab.WithHTTPClient(hc),
		// Callers own retries and pacing (the status Reporter, autoresize's
		// back-off): client-go's own retries (5, on 429 and 5xx) would hold
		// a worker and hide the Retry-After they must see, and its
		// client-side limiter would block a worker waiting for a token
		// instead of reporting the limit.
		gitlab.WithoutRetries(),
		gitlab.WithCustomLimiter(noWait{}),
	)
	if err != nil {
		return nil, fmt.Errorf("git host %s: %w", base.Redacted(), err)
	}
	return client, nil
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
