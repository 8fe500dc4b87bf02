package githost

import (
	"context"
	"fmt"

	"code.gitea.io/sdk/gitea"
)

// Gitea returns a Gitea SDK client for h (type gitea), with its URL and
// token. The client holds ctx (SetContext), so one client shared by
// concurrent operations would race on it: build one per operation, which
// costs no request, since SetGiteaVersion("") skips the version request
// NewClient otherwise makes. SetToken sends "Authorization: token <token>".
// Pass its errors through GiteaError; the repository is named by
// Host.RepositoryPath.
func (c Clients) Gitea(ctx context.Context, h Host) (*gitea.Client, error) {
	base, hc, err := c.check(h, Gitea)
	if err != nil {
		return nil, err
	}
	client, err := gitea.NewClient(base.String(),
		gitea.SetHTTPClient(hc),
		gitea.SetToken(h.Token),
		gitea.SetContext(ctx),
		gitea.SetGiteaVersion(""),
	)
	if err != nil {
		return nil, fmt.Errorf("gitea: git host %s: %w", base.Redacted(), err)
	}
	return client, nil
}

// GiteaError maps an error of a Gitea SDK call onto the package's
// classification (see classify.go), naming op ("gitea: POST
// repos/o/r/...") and with token scrubbed.
func GiteaError(op string, resp *gitea.Response, err error, token string) error {
	switch {
	case resp == nil || resp.Response == nil:
		return transportError(op, err, token)
	case resp.StatusCode/100 == 2:
		return undecodedError(op, resp.StatusCode, err, token)
	}
	// The SDK's error is the body's "message" (or the body itself).
	return httpStatusError(op, resp.StatusCode, resp.Header, err.Error(), token)
}
