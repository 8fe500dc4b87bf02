package commitstatus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// gitlabProvider posts through client-go's Commits.SetCommitStatus:
// POST /api/v4/projects/{id}/statuses/{sha}, the project ID being the
// URL-encoded full path (group%2Fsubgroup%2Fname), so nested groups need no
// project-ID lookup.
type gitlabProvider struct {
	client *gitlab.Client
	host   githost.Host
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

func newGitLabProvider(h githost.Host, clients githost.Clients) (Provider, error) {
	client, err := clients.GitLab(h)
	if err != nil {
		return nil, err
	}
	return &gitlabProvider{client: client, host: h}, nil
}

func (p *gitlabProvider) Post(ctx context.Context, repo githost.Repository, sha string, s Status) error {
	if err := validateStatus(sha, s); err != nil {
		return err
	}
	project := p.host.RepositoryPath(repo)
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
		cannotTransition(err) {
		return nil
	}
	op := fmt.Sprintf("gitlab: POST projects/%s/statuses/%s", gitlab.PathEscape(project), sha)
	return githost.GitLabError(op, resp, err, p.host.Token)
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
func (p *gitlabProvider) Shows(ctx context.Context, repo githost.Repository, sha string, s Status) (bool, error) {
	if err := validateStatus(sha, s); err != nil {
		return false, err
	}
	project := p.host.RepositoryPath(repo)
	opt := &gitlab.GetCommitStatusesOptions{
		ListOptions: gitlab.ListOptions{PerPage: 100, OrderBy: "id", Sort: "desc"},
		Name:        gitlab.Ptr(s.Context),
	}
	statuses, resp, err := p.client.Commits.GetCommitStatuses(project, sha, opt, gitlab.WithContext(ctx))
	if err != nil {
		op := fmt.Sprintf("gitlab: GET projects/%s/repository/commits/%s/statuses", gitlab.PathEscape(project), sha)
		return false, githost.GitLabError(op, resp, err, p.host.Token)
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

// cannotTransition reports whether GitLab refused a status because the
// commit already shows its state.
func cannotTransition(err error) bool {
	var er *gitlab.ErrorResponse
	return errors.As(err, &er) && strings.Contains(er.Message, "Cannot transition status")
}
