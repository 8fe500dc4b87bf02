package spokes

import (
	"errors"
	"fmt"
	"slices"
)

// Set is the loaded spokes, each found by its name, its server or its Argo
// CD name: tool objects name their cluster by server (an Application's
// destination.server, a kubeconfig's server) or by Argo CD name
// (destination.name).
type Set struct {
	all                            []Spoke
	byName, byServer, byArgoCDName map[string]int
}

// NewSet makes a Set of spokes. Two spokes with the same name, server or
// Argo CD name are refused, since a tool object naming one could be routed
// to either; so is a spoke at InClusterServer, which is the hub.
func NewSet(spokes []Spoke) (*Set, error) {
	s := &Set{all: slices.Clone(spokes), byName: map[string]int{}, byServer: map[string]int{}, byArgoCDName: map[string]int{}}
	var errs []error
	// index records spoke i under k in m, or says which spoke holds k.
	index := func(m map[string]int, k, what string, i int) {
		if j, ok := m[k]; ok {
			errs = append(errs, fmt.Errorf("clusters %q and %q have the same %s %q", s.all[j].Name, s.all[i].Name, what, k))
			return
		}
		m[k] = i
	}
	for i, sp := range s.all {
		sp.Server = NormalizeServer(sp.Server)
		s.all[i].Server = sp.Server
		if sp.Server == InClusterServer {
			errs = append(errs, fmt.Errorf("cluster %q: server %s is the cluster claimwarden runs in, not a spoke", sp.Name, sp.Server))
		}
		index(s.byName, sp.Name, "name", i)
		index(s.byServer, sp.Server, "server", i)
		if sp.ArgoCDName != "" {
			index(s.byArgoCDName, sp.ArgoCDName, "Argo CD name", i)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// ByName returns the spoke claimwarden calls name.
func (s *Set) ByName(name string) (Spoke, bool) { return s.lookup(s.byName, name) }

// ByServer returns the spoke whose API server is server, trailing slashes
// aside.
func (s *Set) ByServer(server string) (Spoke, bool) {
	return s.lookup(s.byServer, NormalizeServer(server))
}

// ByArgoCDName returns the spoke whose Argo CD cluster Secret is named name.
// A kubeconfig's spoke has none: "" finds nothing.
func (s *Set) ByArgoCDName(name string) (Spoke, bool) { return s.lookup(s.byArgoCDName, name) }

// All returns every spoke, in the order configured.
func (s *Set) All() []Spoke { return slices.Clone(s.all) }

func (s *Set) lookup(m map[string]int, k string) (Spoke, bool) {
	i, ok := m[k]
	if !ok {
		return Spoke{}, false
	}
	return s.all[i], true
}
