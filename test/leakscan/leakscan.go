// Package leakscan finds secrets in text a test run produced (logs, events,
// statuses): each secret as written, URL-encoded (query and path escaping, as
// it would sit in a URL's userinfo or query) and base64-encoded at any
// alignment (standard and URL alphabets), so that a token inside a
// "Basic base64(user:token)" header or a base64 blob is found too.
package leakscan

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// MinLength is the shortest secret Add accepts: shorter values would match
// by chance (and tokens and passwords of the test run are longer).
const MinLength = 8

// needle is one form of a secret.
type needle struct{ text, what string }

// Scanner holds the secrets of a run. Safe for concurrent use.
type Scanner struct {
	mu      sync.Mutex
	needles map[string]needle // by text
}

// New returns a Scanner without secrets.
func New() *Scanner { return &Scanner{needles: map[string]needle{}} }

// Add makes value, named what ("gitea token"), a secret to look for. It
// fails on values shorter than MinLength.
func (s *Scanner) Add(what, value string) error {
	if len(value) < MinLength {
		return fmt.Errorf("leakscan: %s is %d bytes, too short to look for (at least %d)", what, len(value), MinLength)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range forms(what, value) {
		if _, ok := s.needles[n.text]; !ok {
			s.needles[n.text] = n
		}
	}
	return nil
}

// Find returns what leaks in text: "<what> (<form>)", sorted, each once.
func (s *Scanner) Find(text string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, n := range s.needles {
		if strings.Contains(text, n.text) {
			seen[n.what] = true
		}
	}
	out := make([]string, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// forms are the texts value can appear as.
func forms(what, value string) []needle {
	out := []needle{{value, what}}
	for form, enc := range map[string]string{"query-escaped": url.QueryEscape(value), "path-escaped": url.PathEscape(value)} {
		if enc != value {
			out = append(out, needle{enc, what + " (" + form + ")"})
		}
	}
	// One name for both alphabets: they agree wherever no '+' or '/' falls.
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for offset := range 3 {
			if t := aligned(enc, value, offset); t != "" {
				out = append(out, needle{t, what + " (base64)"})
			}
		}
	}
	return out
}

// aligned is the part of the encoding of value, preceded by offset other
// bytes, that depends on value's bytes alone: what any encoding containing
// value at that offset (mod 3) contains, whatever surrounds it. Character j
// covers bits [6j, 6j+6); value covers [8·offset, 8·(offset+len)).
func aligned(enc *base64.Encoding, value string, offset int) string {
	encoded := enc.EncodeToString(append(make([]byte, offset), value...))
	from := (8*offset + 5) / 6
	to := 8 * (offset + len(value)) / 6
	if to-from < MinLength {
		return ""
	}
	return encoded[from:to]
}
