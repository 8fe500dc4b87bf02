package argocd

import "testing"

func TestNamespacedKindPermitted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		project projectSpec
		want    bool
	}{
		{"no lists", projectSpec{}, true},
		{"an empty whitelist permits nothing", projectSpec{NamespaceResourceWhitelist: []groupKind{}}, false},
		{"whitelisted", projectSpec{NamespaceResourceWhitelist: []groupKind{{Group: "apps", Kind: "StatefulSet"}}}, true},
		{"whitelisted by pattern", projectSpec{NamespaceResourceWhitelist: []groupKind{{Group: "*", Kind: "*"}}}, true},
		{"kind pattern", projectSpec{NamespaceResourceWhitelist: []groupKind{{Group: "apps", Kind: "Stateful*"}}}, true},
		{"another kind only", projectSpec{NamespaceResourceWhitelist: []groupKind{{Group: "apps", Kind: "Deployment"}}}, false},
		{"another group only", projectSpec{NamespaceResourceWhitelist: []groupKind{{Group: "", Kind: "StatefulSet"}}}, false},
		{"blacklisted", projectSpec{NamespaceResourceBlacklist: []groupKind{{Group: "apps", Kind: "StatefulSet"}}}, false},
		{"blacklisted by pattern, whitelisted too", projectSpec{
			NamespaceResourceWhitelist: []groupKind{{Group: "*", Kind: "*"}},
			NamespaceResourceBlacklist: []groupKind{{Group: "apps", Kind: "*"}},
		}, false},
		{"another kind blacklisted", projectSpec{NamespaceResourceBlacklist: []groupKind{{Group: "", Kind: "Secret"}}}, true},
		{"a malformed pattern matches nothing", projectSpec{NamespaceResourceBlacklist: []groupKind{{Group: "apps", Kind: "[Stateful"}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := namespacedKindPermitted(tc.project, statefulSetKind); got != tc.want {
				t.Errorf("namespacedKindPermitted(%+v) = %v, want %v", tc.project, got, tc.want)
			}
		})
	}
}
