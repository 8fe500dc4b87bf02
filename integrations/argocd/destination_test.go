package argocd

import (
	"strings"
	"testing"
)

func TestClusterOf(t *testing.T) {
	eu := Cluster{Name: "eu", Server: "https://eu.example:6443", ArgoCDName: "prod-eu"}
	apps := &Applications{clusters: []Cluster{eu}}
	for _, tc := range []struct {
		name string
		dest appDestination
		want Cluster
		err  string // part of the refusal
	}{
		{"server", appDestination{Server: "https://kubernetes.default.svc"}, local, ""},
		{"server with a trailing slash, trimmed as Argo CD does", appDestination{Server: "https://kubernetes.default.svc/"}, local, ""},
		{"the in-cluster name", appDestination{Name: "in-cluster"}, local, ""},
		{"a configured spoke by server", appDestination{Server: "https://eu.example:6443/"}, eu, ""},
		{"a configured spoke by Argo CD's name", appDestination{Name: "prod-eu"}, eu, ""},
		{"claimwarden's name is not Argo CD's", appDestination{Name: "eu"}, Cluster{}, `cluster "eu", which is not one claimwarden is configured for`},
		{"a server nobody configured", appDestination{Server: "https://prod.example:6443"}, Cluster{}, "cluster https://prod.example:6443, which is not one claimwarden is configured for"},
		{"a name nobody configured", appDestination{Name: "prod"}, Cluster{}, `cluster "prod", which is not one`},
		{"both, which Argo CD refuses", appDestination{Server: "https://kubernetes.default.svc", Name: "in-cluster"}, Cluster{}, "names both"},
		{"none", appDestination{Namespace: "shop"}, Cluster{}, "names no cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := apps.clusterOf(tc.dest)
			if tc.err == "" && (err != nil || got != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("clusterOf(%+v) = %+v, %v, want %+v, %q", tc.dest, got, err, tc.want, tc.err)
			}
		})
	}
}

// TestDestinationPermitted mirrors the cases of Argo CD's
// TestAppProject_IsDestinationPermitted that concern one cluster,
// TestAppProject_IsNegatedDestinationPermitted's included.
func TestDestinationPermitted(t *testing.T) {
	const here = "https://kubernetes.default.svc"
	for _, tc := range []struct {
		name      string
		dests     []projectDestination
		namespace string
		want      bool
	}{
		{"no destinations", nil, "shop", false},
		{"server and namespace", []projectDestination{{Server: here, Namespace: "shop"}}, "shop", true},
		{"the in-cluster name", []projectDestination{{Name: "in-cluster", Namespace: "shop"}}, "shop", true},
		{"wildcards", []projectDestination{{Server: "*", Namespace: "*"}}, "shop", true},
		{"namespace glob", []projectDestination{{Server: here, Namespace: "team-*"}}, "team-a", true},
		{"namespace glob, another namespace", []projectDestination{{Server: here, Namespace: "team-*"}}, "shop", false},
		{"another namespace", []projectDestination{{Server: here, Namespace: "other"}}, "shop", false},
		{"another cluster only", []projectDestination{{Server: "https://prod.example", Namespace: "*"}, {Name: "prod", Namespace: "*"}}, "shop", false},
		{"denied namespace", []projectDestination{{Server: "*", Namespace: "!kube-system"}}, "kube-system", false},
		{"a namespace not denied", []projectDestination{{Server: "*", Namespace: "!kube-system"}}, "shop", true},
		{"deny after allow wins", []projectDestination{{Server: "*", Namespace: "*"}, {Server: "*", Namespace: "!shop"}}, "shop", false},
		{"deny before allow wins", []projectDestination{{Server: "*", Namespace: "!shop"}, {Server: "*", Namespace: "*"}}, "shop", false},
		{"denied server", []projectDestination{{Server: "*", Namespace: "*"}, {Server: "!" + here, Namespace: "*"}}, "shop", false},
		{"denied name", []projectDestination{{Name: "!in-cluster", Namespace: "*"}, {Server: "*", Namespace: "*"}}, "shop", false},
		{"another cluster denied", []projectDestination{{Server: "!https://prod.example", Namespace: "*"}}, "shop", true},
		{"a pattern that does not compile matches nothing", []projectDestination{{Server: here, Namespace: "[shop"}}, "shop", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := destinationPermitted(tc.dests, local, tc.namespace); got != tc.want {
				t.Errorf("destinationPermitted(%+v, %q) = %v, want %v", tc.dests, tc.namespace, got, tc.want)
			}
		})
	}
}

// A spoke is matched by its server or by Argo CD's name for it, never by
// this cluster's.
func TestDestinationPermittedOnASpoke(t *testing.T) {
	eu := Cluster{Name: "eu", Server: "https://eu.example:6443", ArgoCDName: "prod-eu"}
	for _, tc := range []struct {
		name  string
		dests []projectDestination
		want  bool
	}{
		{"its server", []projectDestination{{Server: eu.Server, Namespace: "shop"}}, true},
		{"its Argo CD name", []projectDestination{{Name: "prod-eu", Namespace: "shop"}}, true},
		{"this cluster only", []projectDestination{{Server: "https://kubernetes.default.svc", Namespace: "*"}, {Name: "in-cluster", Namespace: "*"}}, false},
		{"claimwarden's name, which Argo CD does not know", []projectDestination{{Name: "eu", Namespace: "*"}}, false},
		{"its server denied", []projectDestination{{Server: "*", Namespace: "*"}, {Server: "!" + eu.Server, Namespace: "*"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := destinationPermitted(tc.dests, eu, "shop"); got != tc.want {
				t.Errorf("destinationPermitted(%+v, eu, shop) = %v, want %v", tc.dests, got, tc.want)
			}
		})
	}
}
