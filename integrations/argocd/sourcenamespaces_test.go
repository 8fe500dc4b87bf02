package argocd

import "testing"

func TestAppNamespacePermitted(t *testing.T) {
	for _, tc := range []struct {
		name         string
		sources      []string
		appNamespace string
		want         bool
	}{
		{"the control plane's namespace", nil, "argocd", true},
		{"another namespace, none listed", nil, "team-a", false},
		{"listed", []string{"team-a"}, "team-a", true},
		{"glob", []string{"team-*"}, "team-a", true},
		{"glob, another namespace", []string{"team-*"}, "shop", false},
		{"regular expression", []string{"/^team-[ab]$/"}, "team-b", true},
		{"regular expression, another namespace", []string{"/^team-[ab]$/"}, "team-c", false},
		{"a regular expression RE2 cannot compile matches nothing", []string{"/^(?!kube-).*$/"}, "team-a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := appNamespacePermitted(projectSpec{SourceNamespaces: tc.sources}, tc.appNamespace, "argocd"); got != tc.want {
				t.Errorf("appNamespacePermitted(%v, %q) = %v, want %v", tc.sources, tc.appNamespace, got, tc.want)
			}
		})
	}
}
