package autoresize

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/source"
)

// origin is the GitOps object that applies a StatefulSet, and what its
// proposal carries.
type origin struct {
	// Applier is the tool object, the identity its tool applies as (nil:
	// as itself), and, found at rest, the object as read to confirm it
	// (nil for a proposal's source: locate reads it then).
	source.Applier
	// IgnoredLabels are the proposal's template labels never copied onto
	// claims.
	IgnoredLabels []string
}

// sourceOf is the GitOps object that applies live: the one of its newest
// proposal, or the one the StatefulSet names whose tool's record confirms
// it there (source.Registry.AppliedBy).
func (c *Controller) sourceOf(ctx context.Context, live *appsv1.StatefulSet, reader client.Reader) (origin, error) {
	if p, ok := c.Proposals.Get(keyOf(live)); ok {
		return origin{Applier: source.Applier{Source: p.Source, Authority: p.Authority}, IgnoredLabels: p.IgnoredLabels}, nil
	}
	a, ok, err := c.Tools.AppliedBy(ctx, reader, c.Cluster, live)
	switch {
	case err != nil:
		return origin{}, err
	case ok:
		return origin{Applier: a}, nil
	}
	var kinds []string
	for _, t := range c.Tools.AtRest() {
		kinds = append(kinds, t.Kind())
	}
	return origin{}, fmt.Errorf("no %s applies it: there is no repository to propose a resize to", strings.Join(kinds, ", "))
}

// Where is where a GitOps tool reads a StatefulSet from in Git: the pull
// request goes to that repository and branch, and edits a file there.
type Where = source.Where

// errNoLocator says no tool of the registry locates the kind of a
// proposal's source.
var errNoLocator = errors.New("autoresize proposes pull requests for Flux Kustomizations, HelmReleases and Argo CD Applications")

// locate is where the tool object of src reads its StatefulSets from,
// asked of its tool (source.Locator), tool objects read with reader;
// src.Object is that object when sourceOf read it already (nil: it is
// read).
func (c *Controller) locate(ctx context.Context, src source.Applier, reader client.Reader) (Where, error) {
	l, ok := c.Tools.Locator(src.Source.Kind)
	if !ok {
		return Where{}, fmt.Errorf("proposed by a %s: %w", src.Source.Kind, errNoLocator)
	}
	obj := src.Object
	if obj == nil {
		obj = l.NewObject()
		key := types.NamespacedName{Namespace: src.Source.Namespace, Name: src.Source.Name}
		if err := reader.Get(ctx, key, obj); err != nil {
			return Where{}, fmt.Errorf("reading %s %s: %w", src.Source.Kind, key, err)
		}
	}
	return l.Locate(ctx, obj, c.Tools.Parents(reader))
}
