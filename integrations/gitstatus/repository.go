package gitstatus

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
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
// ignored.
//
// Errors quote the URL with any user information (which may be a token, as
// in https://x-access-token:<token>@github.com/...) replaced by "xxxxx", and
// say what is wrong.
func ParseRepositoryURL(raw string) (Repository, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Repository{}, fmt.Errorf("repository URL is empty")
	}
	shown := RedactURL(s)
	bad := func(format string, args ...any) (Repository, error) {
		return Repository{}, fmt.Errorf("repository URL %q: %s", shown, fmt.Sprintf(format, args...))
	}

	var host, path string
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			// url.Error quotes the whole URL, user information included:
			// keep only its cause.
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
		if u.Hostname() == "" {
			return bad("names no host")
		}
		if port := u.Port(); port != "" {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return bad("port %s is not a port (1-65535)", port)
			}
		}
		host = strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]" // IPv6 literal
		}
		if port := u.Port(); port != "" && port != defaultPort {
			host = net.JoinHostPort(strings.Trim(host, "[]"), port)
		}
		path = u.Path
	} else {
		// scp-like: [user@]host:path. Git takes a string as a local path
		// when a "/" comes before the first ":", and so do we (refused).
		rest := s
		if at := strings.Index(rest, "@"); at >= 0 && !strings.ContainsAny(rest[:at], "/:") {
			rest = rest[at+1:]
		}
		if strings.HasPrefix(rest, "[") { // [::1]:owner/name
			end := strings.Index(rest, "]:")
			if end < 0 {
				return bad("has an unterminated IPv6 address")
			}
			host, path = strings.ToLower(rest[:end+1]), rest[end+2:]
		} else {
			colon := strings.Index(rest, ":")
			if colon < 0 || strings.Contains(rest[:colon], "/") {
				return bad("is neither a URL (https://, http://, ssh://) nor an scp-like address (git@host:owner/name.git)")
			}
			host, path = strings.ToLower(rest[:colon]), rest[colon+1:]
		}
		if host == "" || host == "[]" {
			return bad("names no host")
		}
		if strings.ContainsAny(host, " \t/\\?#") {
			return bad("host %q is not a host name", host)
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

// RedactURL replaces the user information of a URL ("user:password@"
// after "://") by "xxxxx@", without parsing, so that it works on strings
// url.Parse refuses. A bare user name is hidden too: HTTPS remotes often
// carry a token as the user name. scp-like addresses ("git@host:path") are
// returned unchanged: their user is an account name, never a secret.
func RedactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	authority := rest
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		authority = rest[:end]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return s
	}
	return scheme + "://xxxxx" + rest[at:]
}
