package autoresize

import "testing"

// Pull requests go only to the repositories a namespace's rule lists,
// whole path elements, whatever form the URL takes.
func TestRuleAllows(t *testing.T) {
	r := &Rule{RepositoryPrefixes: []string{"https://git.example.com/team-a", "not a url ::"}}
	for repo, want := range map[string]bool{
		"https://git.example.com/team-a/shop.git": true,
		"git@git.example.com:team-a/shop.git":     true,
		"https://git.example.com/team-ab/shop":    false,
		"https://other.example.com/team-a/shop":   false,
		"":                                        false,
	} {
		if got := r.allows(repo); got != want {
			t.Errorf("allows(%q) = %v, want %v", repo, got, want)
		}
	}
}
