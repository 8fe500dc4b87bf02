package spokes

import (
	"strings"
	"testing"
)

func TestSet(t *testing.T) {
	s, err := NewSet([]Spoke{
		{Name: "eu", Server: "https://eu.example.com/", ArgoCDName: "prod-eu"},
		{Name: "us", Server: "https://us.example.com:6443"},
		{Name: "ap", Server: "https://ap.example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		how  string
		find func() (Spoke, bool)
		want string // the spoke's name, "" for none
	}{
		{"name", func() (Spoke, bool) { return s.ByName("us") }, "us"},
		{"unknown name", func() (Spoke, bool) { return s.ByName("in-cluster") }, ""},
		{"server as configured", func() (Spoke, bool) { return s.ByServer("https://us.example.com:6443") }, "us"},
		{"server with a trailing slash", func() (Spoke, bool) { return s.ByServer("https://ap.example.com/") }, "ap"},
		{"server configured with a trailing slash", func() (Spoke, bool) { return s.ByServer("https://eu.example.com") }, "eu"},
		{"other port", func() (Spoke, bool) { return s.ByServer("https://us.example.com") }, ""},
		{"Argo CD name", func() (Spoke, bool) { return s.ByArgoCDName("prod-eu") }, "eu"},
		{"no Argo CD name", func() (Spoke, bool) { return s.ByArgoCDName("") }, ""},
	} {
		sp, ok := tc.find()
		if ok != (tc.want != "") || sp.Name != tc.want {
			t.Errorf("by %s: %q, %t; want %q", tc.how, sp.Name, ok, tc.want)
		}
	}
	if sp, _ := s.ByName("eu"); sp.Server != "https://eu.example.com" {
		t.Errorf("server %q, want it without the trailing slash", sp.Server)
	}

	all := s.All()
	if len(all) != 3 || all[0].Name != "eu" || all[1].Name != "us" || all[2].Name != "ap" {
		t.Fatalf("All() = %v, want eu, us, ap in order", all)
	}
	all[0].Name = "changed"
	if s.All()[0].Name != "eu" {
		t.Error("changing All()'s result changed the Set")
	}
}

func TestSetRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spokes []Spoke
		want   string
	}{
		{"same name", []Spoke{{Name: "eu", Server: "https://a"}, {Name: "eu", Server: "https://b"}},
			`clusters "eu" and "eu" have the same name "eu"`},
		{"same server", []Spoke{{Name: "eu", Server: "https://a:6443"}, {Name: "us", Server: "https://a:6443/"}},
			`clusters "eu" and "us" have the same server "https://a:6443"`},
		{"same Argo CD name", []Spoke{{Name: "eu", Server: "https://a", ArgoCDName: "prod"}, {Name: "us", Server: "https://b", ArgoCDName: "prod"}},
			`clusters "eu" and "us" have the same Argo CD name "prod"`},
		{"the hub", []Spoke{{Name: "eu", Server: "https://kubernetes.default.svc/"}},
			`cluster "eu": server https://kubernetes.default.svc is the cluster claimwarden runs in, not a spoke`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSet(tc.spokes)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewSet: %v, %v; want an error containing %s", s, err, tc.want)
			}
		})
	}
	// Two kubeconfig spokes have no Argo CD name; that is no clash.
	if _, err := NewSet([]Spoke{{Name: "eu", Server: "https://a"}, {Name: "us", Server: "https://b"}}); err != nil {
		t.Errorf("two spokes without an Argo CD name: %v", err)
	}
}
