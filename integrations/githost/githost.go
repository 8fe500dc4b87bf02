// Package githost is the Git-host layer every integration that calls a Git
// host shares: the hosts (GitHub and GitHub Enterprise, GitLab,
// Gitea/Forgejo, Bitbucket Cloud, Bitbucket Server / Data Center), their
// credentials (Secrets, per-host tokens, GitHub App installations), the
// naming of repositories (ParseRepositoryURL, ResolveHost,
// Host.RepositoryPath), one client constructor per host type, and the
// classification of their errors (*RateLimitError, *UnavailableError,
// *PermanentError) with credentials scrubbed. It knows nothing of who uses
// it: commit statuses, pull requests and pull-request comments.
package githost

import "time"

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
// every request to that host waits RetryAfter, which is above zero. A 5xx
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
