// Package gitstatus posts commit statuses to Git hosts: GitHub and GitHub
// Enterprise, GitLab, Gitea/Forgejo, Bitbucket Cloud and Bitbucket Server /
// Data Center, behind one interface, plus the Reporter that deduplicates,
// queues and retries them so a slow or dead Git host never slows the
// controller. The clients the providers build (New*Client), the mapping of
// their errors (*Error) and the repository naming (ParseRepositoryURL,
// ResolveHost, Host.RepositoryPath) serve the other integrations that call
// the same hosts, e.g. pull-request comments.
package gitstatus

import (
	"context"
	"time"

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

// Repository is a parsed repository URL.
type Repository struct {
	// Host is the host name, with ":port" when the URL names a port.
	Host string
	// Path is the repository path without ".git": "owner/name", or for
	// GitLab possibly "group/subgroup/name".
	Path string
	// Owner is everything before the last path element; Name the last element.
	Owner, Name string
}

// Provider posts statuses to one Git host.
type Provider interface {
	Post(ctx context.Context, repo Repository, sha string, s Status) error
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
	Shows(ctx context.Context, repo Repository, sha string, s Status) (bool, error)
}

// RateLimitError is returned when the host refused because of rate limiting
// (429, or 403 with rate-limit headers); RetryAfter is how long to wait (zero
// when the host did not say).
type RateLimitError struct {
	RetryAfter time.Duration
	Err        error
}

func (e *RateLimitError) Error() string { return "rate limited: " + e.Err.Error() }
func (e *RateLimitError) Unwrap() error { return e.Err }

// UnavailableError is returned when the host answered 5xx and said when to
// come back (Retry-After, as a 503 does during maintenance or overload):
// every status to that host waits RetryAfter, which is above zero. A 5xx
// that says nothing is a plain error, retried with backoff.
type UnavailableError struct {
	RetryAfter time.Duration
	Err        error
}

func (e *UnavailableError) Error() string { return "unavailable: " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// PermanentError is a refusal that retrying cannot fix (401, 404, 422, ...).
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }
