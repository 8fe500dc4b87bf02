package githost

import (
	"fmt"
	"strings"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// ParseRepositoryURL parses a Git remote URL into the repository it names.
//
// Accepted forms, each with or without ".git" and trailing slashes:
//
//	https://host[:port]/owner/name      (and http://)
//	ssh://[user@]host[:port]/owner/name
//	[user@]host:owner/name              (scp-like, as git and Flux accept it)
//
// The path may have more than two elements (GitLab subgroups:
// gitlab.com/group/sub/name; Bitbucket Server: host/scm/PROJ/name); Owner
// is then everything before the last element. Host is lower-cased and keeps
// a port the URL names, except the scheme's default one (443 for https, 80
// for http, 22 for ssh), so https://github.com:443/o/r and
// https://github.com/o/r are one repository. A query or fragment is
// ignored. User information is dropped as proposal.CanonicalRepositoryURL
// drops it ("user:password@" in the scp-like form too), and a URL it
// refuses as ambiguous is refused.
//
// Errors quote the URL with any user information (which may be a token, as
// in https://x-access-token:<token>@github.com/...) replaced by "xxxxx", and
// say what is wrong.
func ParseRepositoryURL(raw string) (Repository, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Repository{}, fmt.Errorf("repository URL is empty")
	}
	shown := proposal.RedactURL(s)
	bad := func(format string, args ...any) (Repository, error) {
		return Repository{}, fmt.Errorf("repository URL %q: %s", shown, fmt.Sprintf(format, args...))
	}

	// Credentials, query and fragment go first, by the same rules that
	// keep them out of every Source; what remains has no user information.
	loc, err := proposal.LocateRepository(s)
	if err != nil {
		return bad("%v", err)
	}
	if len(loc.Path) == 0 {
		return bad("names no repository path (want owner/name)")
	}
	segments, p := loc.Path, strings.Join(loc.Path, "/")
	if len(segments) < 2 {
		return bad("path %q names no owner (want owner/name)", p)
	}
	last := len(segments) - 1
	return Repository{
		Host:  loc.Host,
		Path:  p,
		Owner: strings.Join(segments[:last], "/"),
		Name:  segments[last],
	}, nil
}
