package argocd

import (
	"regexp"
	"strings"

	"github.com/gobwas/glob"
)

// globMatch mirrors Argo CD's util/glob.Match: gobwas/glob without
// separators, so "*" matches any text; a pattern that does not compile
// matches nothing.
func globMatch(pattern, text string) bool {
	ok, err := strictMatch(pattern, text)
	return err == nil && ok
}

// strictMatch mirrors util/glob.MatchWithError: a pattern that does not
// compile is an error rather than no match.
func strictMatch(pattern, text string) (bool, error) {
	g, err := glob.Compile(pattern)
	if err != nil {
		return false, err
	}
	return g.Match(text), nil
}

// isDenyPattern mirrors app_project_types.go's isDenyPattern: a leading
// "!" denies what the rest matches.
func isDenyPattern(pattern string) bool { return strings.HasPrefix(pattern, "!") }

// negatableMatch mirrors app_project_types.go's globMatch with negation
// allowed: a deny pattern matches what its glob does not.
func negatableMatch(pattern, text string) bool {
	if isDenyPattern(pattern) {
		return !globMatch(pattern[1:], text)
	}
	return pattern == "*" || globMatch(pattern, text)
}

// matchStringInList mirrors util/glob.MatchStringInList in its REGEXP mode:
// an entry wrapped in "/" is a regular expression, any entry a glob. Argo
// CD compiles the expressions with regexp2; RE2 here refuses the few it
// cannot compile (backreferences, lookarounds), so they match nothing.
func matchStringInList(list []string, item string) bool {
	for _, entry := range list {
		if len(entry) > 1 && strings.HasPrefix(entry, "/") && strings.HasSuffix(entry, "/") {
			if re, err := regexp.Compile(entry[1 : len(entry)-1]); err == nil && re.MatchString(item) {
				return true
			}
		}
		if globMatch(entry, item) {
			return true
		}
	}
	return false
}
