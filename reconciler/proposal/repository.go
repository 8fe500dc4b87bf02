package proposal

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// RedactedRepository stands in for a repository URL that cannot be parsed
// safely: whatever it holds may be a credential, so it is never passed on.
const RedactedRepository = "<redacted: unparseable repository URL>"

// maxRepositoryURL bounds the URLs read; Git hosts allow far shorter ones.
const maxRepositoryURL = 2048

// RepositoryURL is CanonicalRepositoryURL(raw), or RedactedRepository when
// raw cannot be parsed safely. Sources pass every repository URL they read
// through it before it goes into a Source.
func RepositoryURL(raw string) string {
	s, err := CanonicalRepositoryURL(raw)
	if err != nil {
		return RedactedRepository
	}
	return s
}

// CanonicalRepositoryURL returns a Git remote URL without what may carry a
// credential: user information ("token@", "user:password@", also in the
// scp-like form), query and fragment. The host is lower-cased; scheme, port
// and path are kept, so the result names the same repository:
//
//	https://x-access-token:T@GitHub.com/o/r.git?x=T  →  https://github.com/o/r.git
//	git:T@github.com:o/r                             →  github.com:o/r
//
// It fails when raw cannot be split into host and path without guessing
// (the error never quotes raw): a "?" or "#" before the path, where URL
// parsers and Git's credential code disagree on where the host starts; a
// host that is not a DNS name or an IP literal; control characters. An
// empty raw is no repository: "" without error.
func CanonicalRepositoryURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", nil
	case len(s) > maxRepositoryURL:
		return "", fmt.Errorf("is longer than %d bytes", maxRepositoryURL)
	case strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return "", errors.New("holds white space or control characters")
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		if !isScheme(scheme) {
			// "token@https://host/..." is scp-like to Git, with the token
			// as user: refused, and the scheme, which may hold it, unquoted.
			return "", errors.New("is not a valid URL: what precedes \"://\" is not a scheme")
		}
		return canonicalURL(scheme, rest)
	}
	return canonicalSCP(s)
}

// canonicalURL handles scheme://[userinfo@]host[:port][/path][?query][#fragment].
func canonicalURL(scheme, rest string) (string, error) {
	scheme = strings.ToLower(scheme)
	switch scheme {
	case "https", "http", "ssh", "git":
	default:
		return "", fmt.Errorf("scheme %q is not one of https, http, ssh, git", scheme)
	}
	// The authority ends at the first "/" for Git's credential helper and at
	// the first "/", "?" or "#" for URL parsers. Everything up to the last
	// "@" before the first "/" is user information to either of them.
	authority, path := rest, ""
	if slash := strings.IndexByte(rest, '/'); slash >= 0 {
		authority, path = rest[:slash], rest[slash:]
	}
	if strings.ContainsAny(authority, "?#") {
		return "", errors.New(`is not a valid URL: a "?" or "#" before the path makes the host ambiguous`)
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	host, err := canonicalHost(authority, true)
	if err != nil {
		return "", err
	}
	if cut := strings.IndexAny(path, "?#"); cut >= 0 {
		path = path[:cut]
	}
	u, err := url.Parse(scheme + "://" + host + path)
	if err != nil {
		// url.Error quotes the URL; its cause is enough.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("is not a valid URL: %v", err)
	}
	return scheme + "://" + host + u.EscapedPath(), nil
}

// canonicalSCP handles the scp-like [userinfo@]host:path that Git and Flux
// accept. Git takes a string with a "/" before the first ":" as a local
// path; so do we (refused). User information is everything up to the last
// "@" before the first "/", as go-git (Flux) reads it; "user:password@"
// included.
func canonicalSCP(s string) (string, error) {
	notSCP := errors.New("is neither a URL (https://, http://, ssh://) nor an scp-like address (git@host:owner/name.git)")
	head := s
	if slash := strings.IndexByte(s, '/'); slash >= 0 {
		head = s[:slash]
	}
	if at := strings.LastIndexByte(head, '@'); at >= 0 {
		s = s[at+1:]
	}
	var host, path string
	if strings.HasPrefix(s, "[") { // [2001:db8::1]:owner/name
		end := strings.Index(s, "]:")
		if end < 0 {
			return "", errors.New("has an unterminated IPv6 address")
		}
		host, path = s[:end+1], s[end+2:]
	} else {
		colon := strings.IndexByte(s, ':')
		if colon < 0 || strings.Contains(s[:colon], "/") {
			return "", notSCP
		}
		host, path = s[:colon], s[colon+1:]
	}
	host, err := canonicalHost(host, false)
	if err != nil {
		return "", err
	}
	if cut := strings.IndexAny(path, "?#"); cut >= 0 {
		path = path[:cut]
	}
	return host + ":" + path, nil
}

// canonicalHost lower-cases a host (with a port when withPort) and refuses
// anything that is neither a DNS name nor an IP literal: a "%", "@" or
// other character there means the string was not split where its author
// meant, and what follows may be a credential.
func canonicalHost(hostport string, withPort bool) (string, error) {
	host, port := hostport, ""
	if withPort {
		if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
			host, port = hostport[:i], hostport[i+1:]
			if port == "" || len(port) > 5 || strings.ContainsFunc(port, func(r rune) bool { return r < '0' || r > '9' }) {
				return "", errors.New("is not a valid URL: the port is not a number")
			}
		}
	}
	host = strings.ToLower(host)
	if host == "" || host == "[]" {
		return "", errors.New("names no host")
	}
	if strings.HasPrefix(host, "[") {
		ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		if !strings.HasSuffix(host, "]") || ip == nil || ip.To4() != nil {
			return "", errors.New("host is not an IPv6 address in brackets")
		}
	} else if strings.ContainsFunc(host, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '.' && r != '-' && r != '_'
	}) {
		return "", errors.New("host is not a DNS name or IP address")
	}
	if port != "" {
		return host + ":" + port, nil
	}
	return host, nil
}

// RedactURL replaces the user information of a URL by "xxxxx@", without
// parsing, so that it works on strings url.Parse refuses. User information
// is everything up to the last "@" before the first "/" (after "scheme://"
// if any: "token@https://host/" is scp-like to Git, with user "token"):
// Git's credential code reads it so, and it takes in what a URL parser
// would call the query or fragment ("https://a#b@host/" is user "a#b" to
// Git), the scp-like "user:password@host:path" and a bare user name (HTTPS
// remotes often carry a token as the user name).
func RedactURL(s string) string {
	prefix, rest := "", s
	if scheme, after, ok := strings.Cut(s, "://"); ok && isScheme(scheme) {
		prefix, rest = scheme+"://", after
	}
	head := rest
	if slash := strings.IndexByte(rest, '/'); slash >= 0 {
		head = rest[:slash]
	}
	at := strings.LastIndexByte(head, '@')
	if at < 0 {
		return s
	}
	return prefix + "xxxxx" + rest[at:]
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or "."), as Git's is_url requires before it
// reads a string as a URL rather than scp-like.
func isScheme(s string) bool {
	if s == "" || !('a' <= s[0]|0x20 && s[0]|0x20 <= 'z') {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '+' && r != '-' && r != '.'
	})
}
