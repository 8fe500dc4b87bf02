package proposal

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Location is where a repository URL points as Git hosts (and commit
// statuses) see it: the host, lower-cased, with a port other than the
// scheme's default, and the path elements without ".git" or surrounding
// slashes.
type Location struct {
	Host string
	Path []string
}

// defaultPorts are the schemes a repository URL may have and the port each
// may leave out.
var defaultPorts = map[string]string{"https": "443", "http": "80", "ssh": "22"}

// LocateRepository reads raw, a repository URL in any form Git takes (or a
// prefix of one: the path may be empty), into its Location, after
// CanonicalRepositoryURL. Errors say what is wrong without quoting raw.
func LocateRepository(raw string) (Location, error) {
	clean, err := CanonicalRepositoryURL(raw)
	if err != nil {
		return Location{}, err
	}
	if clean == "" {
		return Location{}, errors.New("is empty")
	}
	var l Location
	var path string
	if strings.Contains(clean, "://") {
		if l.Host, path, err = locateURL(clean); err != nil {
			return Location{}, err
		}
	} else if strings.HasPrefix(clean, "[") {
		// scp-like with an IPv6 literal, user information already dropped.
		end := strings.Index(clean, "]:")
		l.Host, path = clean[:end+1], clean[end+2:]
	} else {
		l.Host, path, _ = strings.Cut(clean, ":")
	}
	p := strings.TrimRight(strings.TrimSuffix(strings.Trim(path, "/"), ".git"), "/")
	if p == "" {
		return l, nil
	}
	l.Path = strings.Split(p, "/")
	for _, e := range l.Path {
		switch e {
		case "":
			return Location{}, fmt.Errorf("path %q has an empty element", p)
		case ".", "..":
			return Location{}, fmt.Errorf("path %q has a %q element", p, e)
		}
	}
	return l, nil
}

// locateURL is LocateRepository's host and path of scheme://host[:port]/path.
func locateURL(clean string) (host, path string, err error) {
	u, err := url.Parse(clean)
	if err != nil {
		// url.Error quotes the whole URL: keep only its cause.
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return "", "", fmt.Errorf("is not a valid URL: %v", err)
	}
	defaultPort, ok := defaultPorts[strings.ToLower(u.Scheme)]
	if !ok {
		return "", "", fmt.Errorf("scheme %q is not one of https, http, ssh", u.Scheme)
	}
	port := u.Port()
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", "", fmt.Errorf("port %s is not a port (1-65535)", port)
		}
	}
	host = u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6 literal
	}
	if port != "" && port != defaultPort {
		host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	return host, u.Path, nil
}

// UnderAny reports whether l is under one of prefixes, repository URLs in
// any form Git takes (or prefixes of them); one that does not read as such
// matches nothing.
func (l Location) UnderAny(prefixes []string) bool {
	for _, p := range prefixes {
		if prefix, err := LocateRepository(p); err == nil && l.Under(prefix) {
			return true
		}
	}
	return false
}

// Under reports whether l is prefix or below it, path element by path
// element, so that .../org does not take in .../org-evil.
func (l Location) Under(prefix Location) bool {
	return l.Host == prefix.Host && len(prefix.Path) <= len(l.Path) && slices.Equal(l.Path[:len(prefix.Path)], prefix.Path)
}
