package autoresize

import (
	"context"
	"errors"
	"sync"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
)

// repoMemo asks the Git host about each repository once per round, not
// once per StatefulSet: the open pull requests of claimwarden's (where
// the host lists them, pullrequest.OpenLister) and the default branch.
// Every StatefulSet with an open pull request is asked after at every
// check, and a fleet's repositories are few; the host's rate limit is the
// fleet's. An answer that failed is not remembered: the next check asks
// again, or waits out the host's back-off.
type repoMemo struct {
	mu    sync.Mutex
	repos map[githost.Repository]*repoAnswers
}

// repoAnswers are one repository's answers of the round: its open pull
// requests of claimwarden's by key (nil where the host lists them not in
// one go, or too many are open: a key must then be asked on its own), and
// its default branch.
type repoAnswers struct {
	open   lazy[map[string]pullrequest.PullRequest]
	branch lazy[string]
}

func newRepoMemo() *repoMemo {
	return &repoMemo{repos: map[githost.Repository]*repoAnswers{}}
}

func (m *repoMemo) of(repo githost.Repository) *repoAnswers {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.repos[repo]
	if a == nil {
		a = &repoAnswers{}
		m.repos[repo] = a
	}
	return a
}

// openPull is key's open pull request in repo as the round's listing
// says; nil when it holds none, or cannot say (the host lists none, too
// many are open, or the listing failed): then Last must be asked.
func (m *repoMemo) openPull(ctx context.Context, host pullrequest.Proposer, repo githost.Repository, key string) *pullrequest.PullRequest {
	lister, ok := host.(pullrequest.OpenLister)
	if !ok {
		return nil
	}
	open, err := m.of(repo).open.get(ctx, func() (map[string]pullrequest.PullRequest, error) {
		byKey, err := lister.Open(ctx, repo.Owner, repo.Name, KeyPrefix)
		if errors.Is(err, pullrequest.ErrTooManyOpen) {
			return nil, nil
		}
		return byKey, err
	})
	if p, ok := open[key]; ok && err == nil {
		return &p
	}
	return nil
}

// defaultBranch is repo's default branch, asked once per round.
func (m *repoMemo) defaultBranch(ctx context.Context, host pullrequest.Proposer, repo githost.Repository) (string, error) {
	return m.of(repo).branch.get(ctx, func() (string, error) { return host.DefaultBranch(ctx, repo.Owner, repo.Name) })
}
