package check

import (
	"errors"
	"fmt"
	"strings"

	"github.com/claimwarden/claimwarden/integrations/manifests"
)

// placement is where a current StatefulSet is: its namespace and name,
// and for a base one where it is written and where its namespace came
// from.
type placement struct {
	namespace, name string
	manifests.Location
	namespaceFrom namespaceFrom
}

// namespaceMoves refuses the StatefulSets that leave a namespace for
// another: a proposed StatefulSet new in its namespace while the current
// state (current, by namespace/name; where names the current state in
// messages) has one of the same name in a namespace where the proposal has
// none. That is most likely a namespace the proposal lost, or one the
// GitOps tool sets and check was not told of, and would pass a change
// unchecked as a new StatefulSet. The work is linear in the StatefulSets.
func namespaceMoves(current map[string]placement, sets []proposal, where string) error {
	proposed := make(map[string]bool, len(sets))
	for _, p := range sets {
		proposed[p.namespace+"/"+p.name] = true
	}
	// left holds, by name, the current StatefulSet the proposal lacks (of
	// several, the one of the first namespace) and how many there are.
	type gone struct {
		placement
		n int
	}
	left := map[string]gone{}
	for key, c := range current {
		if proposed[key] {
			continue
		}
		g, seen := left[c.name]
		if !seen || c.namespace < g.namespace {
			g.placement = c
		}
		g.n++
		left[c.name] = g
	}
	var errs []error
	for _, p := range sets {
		if _, ok := current[p.namespace+"/"+p.name]; ok {
			continue
		}
		if g, ok := left[p.name]; ok {
			errs = append(errs, moveError(p, g.placement, g.n-1, where))
		}
	}
	return errors.Join(errs...)
}

// moveError says that p leaves c's namespace, others being the further
// namespaces the proposal lacks a StatefulSet of that name in, and which
// flag says what the tool does.
func moveError(p proposal, c placement, others int, where string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "StatefulSet %s moves from namespace %s to namespace %s: %s has %s/%s", p.name, c.namespace, p.namespace, where, c.namespace, c.name)
	if c.File != "" {
		fmt.Fprintf(&b, " (%s%s)", c.Location, namespaceOrigin(c.namespaceFrom, c.namespace))
	}
	if others > 0 {
		fmt.Fprintf(&b, " and %d more of that name in other namespaces", others)
	}
	fmt.Fprintf(&b, ", the proposal %s/%s instead (%s%s). ", p.namespace, p.name, p.Location, namespaceOrigin(p.namespaceFrom, p.namespace))
	var fixes []string
	if p.namespaceFrom == fromFallback {
		fixes = append(fixes, "--namespace "+c.namespace+" (kubectl -n, an Argo CD Application's spec.destination.namespace)")
	}
	if c.namespaceFrom == fromFallback {
		fixes = append(fixes, "--namespace "+p.namespace+" (kubectl -n, an Argo CD Application's spec.destination.namespace)")
	}
	fixes = append(fixes, "--target-namespace "+c.namespace+" (a Flux Kustomization's spec.targetNamespace)")
	fmt.Fprintf(&b, "If the GitOps tool applies it into one namespace, give %s; if the StatefulSet does move, give --allow-namespace-move and it is checked as new", strings.Join(fixes, " or "))
	return errors.New(b.String())
}

// namespaceOrigin says, after a location, where namespace came from when
// the manifest does not name it.
func namespaceOrigin(from namespaceFrom, namespace string) string {
	switch from {
	case fromFallback:
		return ", which names no namespace and so gets --namespace " + namespace
	case fromTarget:
		return ", which --target-namespace puts into " + namespace
	}
	return ""
}
