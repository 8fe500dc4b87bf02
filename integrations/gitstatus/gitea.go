package gitstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"code.gitea.io/sdk/gitea"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
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
	owner, name, err := p.ownerName(repo)
	if err != nil {
		return err
	}
	client, err := newGiteaClient(ctx, p.base, p.token, p.hc)
	if err != nil {
		return err
	}
	_, resp, err := client.CreateStatus(owner, name, sha, gitea.CreateStatusOption{
		State:       gitea.StatusState(s.State),
		TargetURL:   s.TargetURL,
		Description: outcome.ShortDescription(s.Description),
		Context:     s.Context,
	})
	if err == nil || (resp != nil && resp.Response != nil && resp.StatusCode/100 == 2) {
		return nil // a 2xx with an error: created; only decoding the echoed status failed
	}
	op := fmt.Sprintf("gitea: POST repos/%s/%s/statuses/%s", owner, name, sha)
	return GiteaError(op, resp, err, p.token)
}

// ownerName splits repo's path (the instance's sub-path stripped) into
// owner and name: Gitea has no subgroups.
func (p *giteaProvider) ownerName(repo Repository) (owner, name string, err error) {
	owner, name, ok := strings.Cut(stripBasePath(p.base, repo.Path), "/")
	if !ok || strings.Contains(name, "/") {
		return "", "", &PermanentError{Err: fmt.Errorf("gitea: repository path %q is not owner/name", repo.Path)}
	}
	return owner, name, nil
}

// Shows implements StatusReader through the SDK's GetCombinedStatus:
// GET /api/v1/repos/{owner}/{repo}/commits/{sha}/status, in which Gitea
// (and Forgejo) list the newest status of each context, by index. It is
// chosen over ListStatuses, which the SDK cannot sort: Gitea lists those by
// creation time in seconds, so two statuses posted in one second could
// come in either order. The combined status is paginated by the instance's
// default page size (30 unless configured), the most recently updated
// contexts first, and the SDK asks for the first page: a context beyond it
// reads as not shown and is posted once more, as before Shows.
func (p *giteaProvider) Shows(ctx context.Context, repo Repository, sha string, s Status) (bool, error) {
	if err := validateStatus(sha, s); err != nil {
		return false, err
	}
	owner, name, err := p.ownerName(repo)
	if err != nil {
		return false, err
	}
	client, err := newGiteaClient(ctx, p.base, p.token, p.hc)
	if err != nil {
		return false, err
	}
	combined, resp, err := client.GetCombinedStatus(owner, name, sha)
	if err != nil {
		op := fmt.Sprintf("gitea: GET repos/%s/%s/commits/%s/status", owner, name, sha)
		return false, GiteaError(op, resp, err, p.token)
	}
	// One per context is expected; should a host list more, the highest ID
	// is the newest.
	var newest *gitea.Status
	for _, st := range combined.Statuses {
		if st != nil && st.Context == s.Context && (newest == nil || st.ID > newest.ID) {
			newest = st
		}
	}
	if newest == nil {
		return false, nil
	}
	return newest.State == gitea.StatusState(s.State) && newest.Description == outcome.ShortDescription(s.Description), nil
}

// NewGiteaClient returns a Gitea SDK client for h (type gitea), with the
// URL, token and HTTP client the status provider uses, for other
// integrations (pull-request comments). The client holds ctx: build one per
// operation, which costs no request. hc nil means a client with
// DefaultHTTPTimeout. Pass its errors through GiteaError; the repository
// is named by Host.RepositoryPath.
func NewGiteaClient(ctx context.Context, h Host, hc *http.Client) (*gitea.Client, error) {
	base, hc, err := CheckHost(h, hc)
	if err != nil {
		return nil, err
	}
	if h.Type != Gitea {
		return nil, fmt.Errorf("git host %s: type %q is not %q", base.Redacted(), h.Type, Gitea)
	}
	return newGiteaClient(ctx, base, h.Token, hc)
}

// newGiteaClient builds a client per operation: a Gitea SDK client holds
// its context (SetContext), so one client shared by concurrent posts would
// race on it. That costs nothing, since SetGiteaVersion("") skips the
// version request NewClient otherwise makes. SetToken sends
// "Authorization: token <token>".
func newGiteaClient(ctx context.Context, base *url.URL, token string, hc *http.Client) (*gitea.Client, error) {
	client, err := gitea.NewClient(base.String(),
		gitea.SetHTTPClient(hc),
		gitea.SetToken(token),
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
