package gitstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"code.gitea.io/sdk/gitea"
)

// giteaProvider posts through the Gitea SDK's CreateStatus:
// POST /api/v1/repos/{owner}/{repo}/statuses/{sha} with state, target_url,
// description and context. Forgejo keeps this API unchanged. Gitea's states
// are GitHub's (plus "warning", unused), so no mapping is needed.
type giteaProvider struct {
	base  *url.URL
	token string
	hc    *http.Client
}

func newGiteaProvider(base *url.URL, h Host, hc *http.Client) Provider {
	return &giteaProvider{base: base, token: h.Token, hc: hc}
}

func (p *giteaProvider) Post(ctx context.Context, repo Repository, sha string, s Status) error {
	if err := validateStatus(sha, s); err != nil {
		return err
	}
	path := stripBasePath(p.base, repo.Path)
	owner, name, ok := strings.Cut(path, "/")
	if !ok || strings.Contains(name, "/") {
		return &PermanentError{Err: fmt.Errorf("gitea: repository path %q is not owner/name", repo.Path)}
	}
	// A Gitea SDK client holds its context (SetContext), so one client
	// shared by concurrent posts would race on it: each post gets its own,
	// which costs nothing since SetGiteaVersion("") skips the version
	// request NewClient otherwise makes. SetToken sends
	// "Authorization: token <token>".
	client, err := gitea.NewClient(p.base.String(),
		gitea.SetHTTPClient(p.hc),
		gitea.SetToken(p.token),
		gitea.SetContext(ctx),
		gitea.SetGiteaVersion(""),
	)
	if err != nil {
		return fmt.Errorf("gitea: %w", err)
	}
	_, resp, err := client.CreateStatus(owner, name, sha, gitea.CreateStatusOption{
		State:       gitea.StatusState(s.State),
		TargetURL:   s.TargetURL,
		Description: truncateDescription(s.Description),
		Context:     s.Context,
	})
	if err == nil {
		return nil
	}
	op := fmt.Sprintf("gitea: POST repos/%s/%s/statuses/%s", owner, name, sha)
	if resp == nil || resp.Response == nil {
		return transportError(op, err, p.token)
	}
	if resp.StatusCode/100 == 2 {
		return nil // created; only decoding the echoed status failed
	}
	// The SDK's error is the body's "message" (or the body itself).
	return httpStatusError(op, resp.StatusCode, resp.Header, err.Error(), p.token)
}
