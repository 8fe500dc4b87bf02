package check

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/githost"
)

// Rate-limit handling of PostStatuses: a CI job waits for the host rather
// than dropping statuses, but not for long.
const (
	maxPostAttempts   = 4
	defaultRetryAfter = 5 * time.Second
	maxRetryAfter     = time.Minute
)

// ResolveHost picks the Git host statuses and comments of repoURL go to:
// a configured host (gitStatus.hosts), a public one (github.com,
// gitlab.com, bitbucket.org), or, when hostType is set, the repository's
// own host spoken to as that type (hostType also overrides the type of a
// configured host). token is the credential to post with.
func ResolveHost(repoURL string, configured []githost.Host, hostType githost.HostType, token string) (githost.Host, githost.Repository, error) {
	repo, err := githost.ParseRepositoryURL(repoURL)
	if err != nil {
		return githost.Host{}, repo, err
	}
	h, ok := githost.ResolveHost(repo, configured)
	switch {
	case ok && hostType != "":
		h.Type = hostType
	case !ok && hostType != "":
		h = githost.Host{URL: hostURL(repoURL, repo), Type: hostType}
	case !ok:
		return githost.Host{}, repo, fmt.Errorf("no Git host is known for %s: list it in gitStatus.hosts of --config, or give --git-host-type", repo.Host)
	}
	h.Token = token
	return h, repo, nil
}

// hostURL is the web URL of a repository's host: the scheme and host of an
// http(s) URL, else https and the host name (an SSH port is not the API's).
func hostURL(raw string, repo githost.Repository) string {
	lower := strings.ToLower(strings.TrimSpace(raw))
	switch {
	case strings.HasPrefix(lower, "http://"):
		return "http://" + repo.Host
	case strings.HasPrefix(lower, "https://"):
		return "https://" + repo.Host
	}
	host := repo.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return "https://" + host
}

// PostStatuses posts the commit status of every changed StatefulSet of r on
// commit sha, with the contexts the controller uses. A rate-limited post
// waits as the host asks (at most a minute, a few times); other failures
// are collected and returned, naming the context.
func PostStatuses(ctx context.Context, r *Report, p commitstatus.Provider, repo githost.Repository, sha, targetURL string) error {
	var errs []error
	for _, st := range r.StatefulSets {
		cs := st.CommitStatus
		if cs == nil {
			continue
		}
		s := commitstatus.Status{State: commitstatus.State(cs.State), Context: cs.Context, Description: cs.Description, TargetURL: targetURL}
		if err := postWithRetry(ctx, p, repo, sha, s); err != nil {
			errs = append(errs, fmt.Errorf("commit status %s: %w", cs.Context, err))
		}
	}
	return errors.Join(errs...)
}

func postWithRetry(ctx context.Context, p commitstatus.Provider, repo githost.Repository, sha string, s commitstatus.Status) error {
	for attempt := 1; ; attempt++ {
		err := p.Post(ctx, repo, sha, s)
		var rl *githost.RateLimitError
		if err == nil || !errors.As(err, &rl) || attempt == maxPostAttempts {
			return err
		}
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = defaultRetryAfter
		}
		select {
		case <-time.After(min(wait, maxRetryAfter)):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
}
