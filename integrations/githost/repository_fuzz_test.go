package githost

import (
	"net"
	"strings"
	"testing"
)

// FuzzParseRepositoryURL: a parsed repository is well formed (a host, an
// owner, a name, Path = Owner/Name without empty, "." or ".." elements),
// parses again from its https form to itself, and a credential placed
// before the host is neither in the repository nor in the error.
func FuzzParseRepositoryURL(f *testing.F) {
	for _, s := range []string{
		"https://x-access-token:T0KEN@GitHub.com:443/o/r.git/?x=1#f",
		"ssh://git@gitlab.example:2222/group/sub/name",
		"git@github.com:o/r.git",
		"user:pass@host:o/r",
		"https://[2001:db8::1]:8443/scm/PROJ/name",
		"https://host/o/../r",
		"https://a#b@host/o/r",
		"http://host:0/o/r",
		"",
	} {
		f.Add(s, "T0KEN")
	}
	f.Fuzz(func(t *testing.T, raw, secret string) {
		repo, err := ParseRepositoryURL(raw)
		if err == nil {
			checkRepository(t, raw, repo)
		}
		secret = "Zq9" + secret // no message holds it by chance
		if strings.ContainsAny(secret, "/@") || strings.Contains(raw, secret) {
			return
		}
		for _, prefix := range []string{"https://", "ssh://", ""} {
			s := prefix + secret + "@" + raw
			repo, err := ParseRepositoryURL(s)
			if err != nil {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("ParseRepositoryURL(%q): the error %q quotes the user information", s, err)
				}
				continue
			}
			if strings.Contains(repo.Host+repo.Path, secret) {
				t.Fatalf("ParseRepositoryURL(%q) = %+v holds the user information", s, repo)
			}
		}
	})
}

func checkRepository(t *testing.T, raw string, repo Repository) {
	t.Helper()
	if repo.Host == "" || repo.Owner == "" || repo.Name == "" || repo.Path != repo.Owner+"/"+repo.Name {
		t.Fatalf("ParseRepositoryURL(%q) = %+v: not host, owner/name", raw, repo)
	}
	for _, seg := range strings.Split(repo.Path, "/") {
		if seg == "" || seg == "." || seg == ".." {
			t.Fatalf("ParseRepositoryURL(%q) = %+v: path element %q", raw, repo, seg)
		}
	}
	if strings.ContainsAny(repo.Host, "@?#/") {
		t.Fatalf("ParseRepositoryURL(%q) = %+v: user information, query or fragment in the host", raw, repo)
	}
	if _, _, err := net.SplitHostPort(repo.Host); err == nil {
		return // the port's meaning depends on the scheme: no https form to compare
	}
	again, err := ParseRepositoryURL("https://" + repo.Host + "/" + repo.Path)
	if err != nil || again != repo {
		t.Fatalf("ParseRepositoryURL(%q) = %+v, whose https form parses to %+v, %v", raw, repo, again, err)
	}
}
