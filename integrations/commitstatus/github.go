package commitstatus

import (
	"context"
	"fmt"
	"strings"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/google/go-github/v93/github"
)

// githubProvider posts through go-github's Repositories.CreateStatus:
// POST /repos/{owner}/{repo}/statuses/{sha} with state, target_url,
// description and context, GitHub's own words (no mapping needed).
type githubProvider struct {
	client *github.Client
	token  string // scrubbed from errors
}

func newGitHubProvider(h githost.Host, clients githost.Clients) (Provider, error) {
	client, err := clients.GitHub(h)
	if err != nil {
		return nil, err
	}
	return &githubProvider{client: client, token: h.Token}, nil
}

// checkGitHubRepository refuses a path GitHub cannot have (subgroups).
func checkGitHubRepository(repo githost.Repository) error {
	if strings.Contains(repo.Owner, "/") || repo.Owner == "" {
		return &githost.PermanentError{Err: fmt.Errorf("github: repository path %q is not owner/name", repo.Path)}
	}
	return nil
}

func (p *githubProvider) Post(ctx context.Context, repo githost.Repository, sha string, s Status) error {
	if err := validateStatus(sha, s); err != nil {
		return err
	}
	if err := checkGitHubRepository(repo); err != nil {
		return err
	}
	status := github.RepoStatus{
		State:       new(string(s.State)),
		Context:     new(s.Context),
		Description: new(outcome.ShortDescription(s.Description)),
	}
	if s.TargetURL != "" {
		status.TargetURL = new(s.TargetURL)
	}
	_, resp, err := p.client.Repositories.CreateStatus(ctx, repo.Owner, repo.Name, sha, status)
	if err == nil || (resp != nil && resp.Response != nil && resp.StatusCode/100 == 2) {
		return nil // a 2xx with an error: created; only decoding the echoed status failed
	}
	op := fmt.Sprintf("github: POST repos/%s/%s/statuses/%s", repo.Owner, repo.Name, sha)
	return githost.GitHubError(op, resp, err, p.token)
}

// githubStatusPages and githubStatusesPerPage bound what Shows reads. GitHub
// lists a commit's statuses of every context newest first and keeps up to
// 1000 per context, so reading until ours turns up could take many requests
// on a worker; a status older than the first 300 entries reads as not shown
// and is posted once more, as it was before Shows.
const (
	githubStatusPages     = 3
	githubStatusesPerPage = 100
)

// Shows implements StatusReader through Repositories.ListStatuses:
// GET /repos/{owner}/{repo}/commits/{sha}/statuses?per_page=100&page=N.
// The newest entry of s.Context (the highest ID on the first page that has
// one, not trusting the order within a page: statuses posted in the same
// second) is compared.
func (p *githubProvider) Shows(ctx context.Context, repo githost.Repository, sha string, s Status) (bool, error) {
	if err := validateStatus(sha, s); err != nil {
		return false, err
	}
	if err := checkGitHubRepository(repo); err != nil {
		return false, err
	}
	opts := &github.ListOptions{PerPage: githubStatusesPerPage}
	for range githubStatusPages {
		statuses, resp, err := p.client.Repositories.ListStatuses(ctx, repo.Owner, repo.Name, sha, opts)
		if err != nil {
			op := fmt.Sprintf("github: GET repos/%s/%s/commits/%s/statuses", repo.Owner, repo.Name, sha)
			return false, githost.GitHubError(op, resp, err, p.token)
		}
		var newest *github.RepoStatus
		for _, st := range statuses {
			if st.GetContext() == s.Context && (newest == nil || st.GetID() > newest.GetID()) {
				newest = st
			}
		}
		if newest != nil {
			return newest.GetState() == string(s.State) && newest.GetDescription() == outcome.ShortDescription(s.Description), nil
		}
		if resp.NextPage == 0 {
			return false, nil
		}
		opts.Page = resp.NextPage
	}
	return false, nil
}
