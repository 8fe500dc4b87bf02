package argocd

import (
	"strings"
	"testing"
)

func TestInCluster(t *testing.T) {
	for _, tc := range []struct {
		name string
		dest appDestination
		want string // part of the refusal; "" when in-cluster
	}{
		{"server", appDestination{Server: "https://kubernetes.default.svc"}, ""},
		{"server with a trailing slash, trimmed as Argo CD does", appDestination{Server: "https://kubernetes.default.svc/"}, ""},
		{"the in-cluster name", appDestination{Name: "in-cluster"}, ""},
		{"a remote server", appDestination{Server: "https://prod.example:6443"}, "applies to cluster https://prod.example:6443, not this one"},
		{"a remote name", appDestination{Name: "prod"}, `applies to cluster "prod", not this one`},
		{"both, which Argo CD refuses", appDestination{Server: "https://kubernetes.default.svc", Name: "in-cluster"}, "names both"},
		{"none", appDestination{Namespace: "shop"}, "names no cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := inCluster(tc.dest)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("inCluster(%+v) = %v, want %q", tc.dest, err, tc.want)
			}
		})
	}
}

// TestDestinationPermitted mirrors the cases of Argo CD's
// TestAppProject_IsDestinationPermitted that concern one cluster,
// TestAppProject_IsNegatedDestinationPermitted's included.
func TestDestinationPermitted(t *testing.T) {
	const local = "https://kubernetes.default.svc"
	for _, tc := range []struct {
		name      string
		dests     []projectDestination
		namespace string
		want      bool
	}{
		{"no destinations", nil, "shop", false},
		{"server and namespace", []projectDestination{{Server: local, Namespace: "shop"}}, "shop", true},
		{"the in-cluster name", []projectDestination{{Name: "in-cluster", Namespace: "shop"}}, "shop", true},
		{"wildcards", []projectDestination{{Server: "*", Namespace: "*"}}, "shop", true},
		{"namespace glob", []projectDestination{{Server: local, Namespace: "team-*"}}, "team-a", true},
		{"namespace glob, another namespace", []projectDestination{{Server: local, Namespace: "team-*"}}, "shop", false},
		{"another namespace", []projectDestination{{Server: local, Namespace: "other"}}, "shop", false},
		{"another cluster only", []projectDestination{{Server: "https://prod.example", Namespace: "*"}, {Name: "prod", Namespace: "*"}}, "shop", false},
		{"denied namespace", []projectDestination{{Server: "*", Namespace: "!kube-system"}}, "kube-system", false},
		{"a namespace not denied", []projectDestination{{Server: "*", Namespace: "!kube-system"}}, "shop", true},
		{"deny after allow wins", []projectDestination{{Server: "*", Namespace: "*"}, {Server: "*", Namespace: "!shop"}}, "shop", false},
		{"deny before allow wins", []projectDestination{{Server: "*", Namespace: "!shop"}, {Server: "*", Namespace: "*"}}, "shop", false},
		{"denied server", []projectDestination{{Server: "*", Namespace: "*"}, {Server: "!" + local, Namespace: "*"}}, "shop", false},
		{"denied name", []projectDestination{{Name: "!in-cluster", Namespace: "*"}, {Server: "*", Namespace: "*"}}, "shop", false},
		{"another cluster denied", []projectDestination{{Server: "!https://prod.example", Namespace: "*"}}, "shop", true},
		{"a pattern that does not compile matches nothing", []projectDestination{{Server: local, Namespace: "[shop"}}, "shop", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := destinationPermitted(tc.dests, tc.namespace); got != tc.want {
				t.Errorf("destinationPermitted(%+v, %q) = %v, want %v", tc.dests, tc.namespace, got, tc.want)
			}
		})
	}
}
