package gitstatus

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
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
	clean, err := proposal.CanonicalRepositoryURL(s)
	if err != nil {
		return bad("%v", err)
	}
	var host, path string
	if strings.Contains(clean, "://") {
		u, err := url.Parse(clean)
		if err != nil {
			// url.Error quotes the whole URL: keep only its cause.
			if ue, ok := err.(*url.Error); ok {
				err = ue.Err
			}
			return bad("is not a valid URL: %v", err)
		}
		scheme := strings.ToLower(u.Scheme)
		defaultPort := map[string]string{"https": "443", "http": "80", "ssh": "22"}[scheme]
		if defaultPort == "" {
			return bad("scheme %q is not one of https, http, ssh", u.Scheme)
		}
		if port := u.Port(); port != "" {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return bad("port %s is not a port (1-65535)", port)
			}
		}
		host = u.Hostname()
		if strings.Contains(host, ":") {
			host = "[" + host + "]" // IPv6 literal
		}
		if port := u.Port(); port != "" && port != defaultPort {
			host = net.JoinHostPort(strings.Trim(host, "[]"), port)
		}
		path = u.Path
	} else {
		// scp-like host:path, user information already dropped.
		if strings.HasPrefix(clean, "[") {
			end := strings.Index(clean, "]:")
			host, path = clean[:end+1], clean[end+2:]
		} else {
			host, path, _ = strings.Cut(clean, ":")
		}
	}

	p := strings.Trim(path, "/")
	p = strings.TrimSuffix(p, ".git")
	p = strings.TrimRight(p, "/")
	if p == "" {
		return bad("names no repository path (want owner/name)")
	}
	segments := strings.Split(p, "/")
	for _, seg := range segments {
		switch seg {
		case "":
			return bad("path %q has an empty element", p)
		case ".", "..":
			return bad("path %q has a %q element", p, seg)
		}
	}
	if len(segments) < 2 {
		return bad("path %q names no owner (want owner/name)", p)
	}
	last := len(segments) - 1
	return Repository{
		Host:  host,
		Path:  p,
		Owner: strings.Join(segments[:last], "/"),
		Name:  segments[last],
	}, nil
}
