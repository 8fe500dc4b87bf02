package githost

import (
	"strings"
	"testing"
)

func TestParseRepositoryURL(t *testing.T) {
	gh := Repository{Host: "github.com", Path: "octo/shop", Owner: "octo", Name: "shop"}
	for _, tc := range []struct {
		in   string
		want Repository
	}{
		{"https://github.com/octo/shop", gh},
		{"https://github.com/octo/shop.git", gh},
		{"https://github.com/octo/shop/", gh},
		{"https://github.com/octo/shop.git/", gh},
		{"  https://GitHub.com/octo/shop.git\n", gh}, // host lower-cased, space trimmed; path case kept
		{"http://github.com/octo/shop", gh},
		{"https://github.com:443/octo/shop", gh}, // a scheme's default port is no port
		{"https://x-access-token:ghs_x@github.com/octo/shop.git", gh},
		{"ssh://git@github.com/octo/shop.git", gh},
		{"ssh://git@github.com:22/octo/shop.git", gh},
		{"ssh://github.com/octo/shop", gh},
		{"git@github.com:octo/shop.git", gh},
		{"git@github.com:octo/shop", gh},
		{"git@github.com:/octo/shop.git", gh},
		{"github.com:octo/shop.git", gh},
		{"https://github.com/octo/shop.git?ref=main#frag", gh},
		{"https://git.example.com:8443/octo/shop.git", Repository{Host: "git.example.com:8443", Path: "octo/shop", Owner: "octo", Name: "shop"}},
		{"http://git.example.com:80/octo/shop", Repository{Host: "git.example.com", Path: "octo/shop", Owner: "octo", Name: "shop"}},
		{"ssh://git@git.example.com:2222/octo/shop.git", Repository{Host: "git.example.com:2222", Path: "octo/shop", Owner: "octo", Name: "shop"}},
		{"https://gitlab.com/a/b/c/name", Repository{Host: "gitlab.com", Path: "a/b/c/name", Owner: "a/b/c", Name: "name"}},
		{"git@gitlab.com:a/b/c/name.git", Repository{Host: "gitlab.com", Path: "a/b/c/name", Owner: "a/b/c", Name: "name"}},
		{"https://bitbucket.example.com/scm/PROJ/shop.git", Repository{Host: "bitbucket.example.com", Path: "scm/PROJ/shop", Owner: "scm/PROJ", Name: "shop"}},
		{"ssh://git@[2001:db8::1]:2222/octo/shop.git", Repository{Host: "[2001:db8::1]:2222", Path: "octo/shop", Owner: "octo", Name: "shop"}},
		{"git@[2001:db8::1]:octo/shop.git", Repository{Host: "[2001:db8::1]", Path: "octo/shop", Owner: "octo", Name: "shop"}},
		{"https://github.com/octo/shop.github.io.git", Repository{Host: "github.com", Path: "octo/shop.github.io", Owner: "octo", Name: "shop.github.io"}},
	} {
		got, err := ParseRepositoryURL(tc.in)
		if err != nil {
			t.Errorf("ParseRepositoryURL(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseRepositoryURL(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// Errors quote the URL, without user information, and say what is wrong.
func TestParseRepositoryURLErrors(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"", "repository URL is empty"},
		{"ftp://github.com/octo/shop", `repository URL "ftp://github.com/octo/shop": scheme "ftp" is not one of https, http, ssh`},
		{"file:///srv/git/shop.git", `scheme "file" is not one of`},
		{"https:///octo/shop", "names no host"},
		{"https://github.com/", "names no repository path"},
		{"https://github.com/shop.git", `path "shop" names no owner`},
		{"https://github.com/octo//shop", `path "octo//shop" has an empty element`},
		{"https://github.com/octo/../shop", `has a ".." element`},
		{"/srv/git/shop.git", "is neither a URL"},
		{"./shop", "is neither a URL"},
		{"shop", "is neither a URL"},
		{"git@:octo/shop", "names no host"},
		{"https://github.com:99999/octo/shop", "port 99999 is not a port (1-65535)"},
		{"https://github.com:0/octo/shop", "port 0 is not a port"},
		{"https://github.com:ssh/octo/shop", "is not a valid URL"},
		{"https://tok:ghp_SECRET@github.com:ssh/octo/shop", `"https://xxxxx@github.com:ssh/octo/shop": is not a valid URL`},
		{"https://ghp_SECRET@github.com/", `"https://xxxxx@github.com/": names no repository path`},
	} {
		_, err := ParseRepositoryURL(tc.in)
		if err == nil {
			t.Errorf("ParseRepositoryURL(%q) succeeded, want an error containing %q", tc.in, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRepositoryURL(%q) = %q, want it to contain %q", tc.in, err, tc.want)
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("ParseRepositoryURL(%q) error %q shows the credential", tc.in, err)
		}
	}
}
