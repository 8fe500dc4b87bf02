package commitstatus

import (
	"context"
	"fmt"
	"strings"

	"code.gitea.io/sdk/gitea"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// giteaProvider posts through the Gitea SDK's CreateStatus:
// POST /api/v1/repos/{owner}/{repo}/statuses/{sha} with state, target_url,
// description and context. Forgejo keeps this API unchanged. Gitea's states
// are GitHub's (plus "warning", unused), so no mapping is needed.
type giteaProvider struct {
	host    githost.Host
	clients githost.Clients
}

func (p *giteaProvider) Post(ctx context.Context, repo githost.Repository, sha string, s Status) error {
	if err := validateStatus(sha, s); err != nil {
		return err
	}
	owner, name, err := p.ownerName(repo)
	if err != nil {
		return err
	}
	client, err := p.clients.Gitea(ctx, p.host)
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
	return githost.GiteaError(op, resp, err, p.host.Token)
}

// ownerName splits repo's path (the instance's sub-path stripped) into
// owner and name: Gitea has no subgroups.
func (p *giteaProvider) ownerName(repo githost.Repository) (owner, name string, err error) {
	owner, name, ok := strings.Cut(p.host.RepositoryPath(repo), "/")
	if !ok || strings.Contains(name, "/") {
		return "", "", &githost.PermanentError{Err: fmt.Errorf("gitea: repository path %q is not owner/name", repo.Path)}
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
func (p *giteaProvider) Shows(ctx context.Context, repo githost.Repository, sha string, s Status) (bool, error) {
	if err := validateStatus(sha, s); err != nil {
		return false, err
	}
	owner, name, err := p.ownerName(repo)
	if err != nil {
		return false, err
	}
	client, err := p.clients.Gitea(ctx, p.host)
	if err != nil {
		return false, err
	}
	combined, resp, err := client.GetCombinedStatus(owner, name, sha)
	if err != nil {
		op := fmt.Sprintf("gitea: GET repos/%s/%s/commits/%s/status", owner, name, sha)
		return false, githost.GiteaError(op, resp, err, p.host.Token)
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
