// Package commitstatus posts commit statuses to Git hosts: GitHub and GitHub
// Enterprise, GitLab, Gitea/Forgejo, Bitbucket Cloud and Bitbucket Server /
// Data Center, behind one interface, plus the Reporter that deduplicates,
// queues and retries them so a slow or dead Git host never slows the
// controller, and the CommitStatusSink that turns the rollout's outcomes
// into statuses. The hosts, their credentials, clients and errors are
// integrations/githost's.
package commitstatus

import (
	"context"

	"github.com/claimwarden/claimwarden/integrations/githost"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// State is a commit status state: the rollout's own (outcome.State), so
// that the core's words and the posted ones cannot drift apart.
type State = outcome.State

// States, as GitHub names them; providers map them to their own words.
const (
	Pending = outcome.Pending
	Success = outcome.Success
	Failure = outcome.Failure
	Error   = outcome.Error
)

// Status is one commit status.
type Status struct {
	State State
	// Context names the status, e.g. claimwarden/shop/web.
	Context string
	// Description is at most outcome.MaxDescription characters (providers shorten it).
	Description string
	// TargetURL is optional.
	TargetURL string
}

// Provider posts statuses to one Git host.
type Provider interface {
	Post(ctx context.Context, repo githost.Repository, sha string, s Status) error
}

// StatusReader is a Provider that can say what the host shows. The
// Reporter asks it once for a status it was seeded with (Reporter.Seed)
// before posting another to that commit: a previous process may have been
// killed after the host stored a status and before it was recorded.
type StatusReader interface {
	// Shows reports whether the newest status of s.Context on sha is s as
	// this provider would post it: its state in the host's words (where two
	// states map onto one word, either matches) and its description as
	// shortened (outcome.ShortDescription). The target URL is not
	// compared. Errors are classified as Post's are.
	Shows(ctx context.Context, repo githost.Repository, sha string, s Status) (bool, error)
}
