package source

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// Registration is a tool and the options of the Reconciler watching it.
type Registration struct {
	Tool    Tool
	Options Options
}

// Registry is the enabled GitOps tools, built once from the
// configuration: the source Reconcilers watch the tools added with Watch,
// and autoresize asks every tool (AtRest, Locator, Parent) which object
// applies a StatefulSet and where Git holds it. The zero value, and a nil
// *Registry, are empty.
type Registry struct {
	// Recorder is the controller's one Recorder, given to every watched
	// tool whose Options name none.
	Recorder outcome.Recorder
	// Spokes are the clusters other than claimwarden's own the tools
	// apply to, given to every watched tool (Options.Spokes).
	Spokes Spokes
	// Select says which tool objects this instance handles (sharding),
	// given to every watched tool (Options.Select); nil: all.
	Select  func(obj client.Object) (handle bool, note string)
	watched []Registration
	tools   []Tool
}

// Watch adds a tool whose objects a source Reconciler watches.
func (r *Registry) Watch(reg Registration) {
	r.watched = append(r.watched, reg)
	r.tools = append(r.tools, reg.Tool)
}

// Know adds a tool whose objects are not watched but are asked about
// (autoresize asks Flux's Kustomizations and HelmReleases when only one of
// them is watched).
func (r *Registry) Know(t Tool) { r.tools = append(r.tools, t) }

// all are the registry's tools, watched or not; none for a nil registry.
func (r *Registry) all() []Tool {
	if r == nil {
		return nil
	}
	return r.tools
}

// Nudgers are the watched tools' Nudgers by cluster ("" claimwarden's
// own, else a spoke's name), in the order the tools were added: the
// rollout controller of each cluster publishes its outcomes to its own.
type Nudgers map[string][]*Nudger

// SetupWithManager registers the Reconciler of every watched tool with
// mgr and returns their Nudgers.
func (r *Registry) SetupWithManager(mgr ctrl.Manager) (Nudgers, error) {
	nudgers := Nudgers{}
	for _, w := range r.watched {
		if w.Options.Recorder.EventRecorder == nil {
			w.Options.Recorder = r.Recorder
		}
		w.Options.Spokes = r.Spokes
		w.Options.Select = r.Select
		byCluster, err := SetupWithManager(mgr, w.Tool, w.Options)
		if err != nil {
			return nil, fmt.Errorf("setting up the %s watcher: %w", w.Tool.Kind(), err)
		}
		for name, n := range byCluster {
			nudgers[name] = append(nudgers[name], n)
		}
	}
	return nudgers, nil
}

// Locator is the tool of kind that locates its objects in Git; false
// when no tool of the registry does.
func (r *Registry) Locator(kind string) (Locator, bool) {
	for _, t := range r.all() {
		if l, ok := t.(Locator); ok && t.Kind() == kind {
			return l, true
		}
	}
	return nil, false
}

// AtRest are the tools that find the object applying a StatefulSet at
// rest, in the order they were added.
func (r *Registry) AtRest() []AtRest {
	var out []AtRest
	for _, t := range r.all() {
		if a, ok := t.(AtRest); ok {
			out = append(out, a)
		}
	}
	return out
}

// Applier is the tool object that applies a StatefulSet at rest.
type Applier struct {
	Source v1alpha1.Source
	// Authority is the identity the tool applies as (nil: as itself).
	Authority *v1alpha1.Identity
	// Object is the tool object as read to confirm it.
	Object client.Object
}

// AppliedBy is the tool object that live, read in cluster (Desired.Cluster),
// names (AtRest.Names), read with reader, whose tool's own record
// confirms it applies live there; false when live names no tool object of
// the registry.
func (r *Registry) AppliedBy(ctx context.Context, reader client.Reader, cluster string, live *appsv1.StatefulSet) (Applier, bool, error) {
	for _, t := range r.AtRest() {
		key, ok := t.Names(live)
		if !ok {
			continue
		}
		obj := t.NewObject()
		if err := reader.Get(ctx, key, obj); err != nil {
			return Applier{}, true, fmt.Errorf("it names %s %s: %w", t.Kind(), key, err)
		}
		if err := t.ManagesAtRest(ctx, obj, cluster, live); err != nil {
			return Applier{}, true, fmt.Errorf("it names %s %s, which does not apply it: %w", t.Kind(), key, err)
		}
		id, err := t.Authority(ctx, obj)
		if err != nil {
			return Applier{}, true, err
		}
		return Applier{Source: v1alpha1.Source{Kind: t.Kind(), Namespace: key.Namespace, Name: key.Name}, Authority: id, Object: obj}, true, nil
	}
	return Applier{}, false, nil
}

// Parents finds, with reader, the parent tool object that applies a tool
// object, among the registry's Parent tools: named by what the object
// says (labels, tracking-id; whoever edits it can set them), confirmed by
// the parent's own record.
func (r *Registry) Parents(reader client.Reader) Parents {
	return func(ctx context.Context, obj client.Object, gk schema.GroupKind) (Where, bool, error) {
		for _, t := range r.all() {
			p, ok := t.(Parent)
			if !ok {
				continue
			}
			key, ok := p.Names(obj)
			if !ok {
				continue
			}
			parent := p.NewObject()
			if err := reader.Get(ctx, key, parent); err != nil {
				return Where{}, false, fmt.Errorf("%s %s/%s names %s %s: %w", gk.Kind, obj.GetNamespace(), obj.GetName(), p.Kind(), key, err)
			}
			if err := p.Applies(ctx, parent, gk, obj); err != nil {
				return Where{}, false, fmt.Errorf("%s %s/%s names %s %s, which does not apply it: %w", gk.Kind, obj.GetNamespace(), obj.GetName(), p.Kind(), key, err)
			}
			w, err := p.LocateSource(ctx, parent)
			return w, true, err
		}
		return Where{}, false, nil
	}
}

// Object reads, with reader, the tool object src names; false when no
// tool of the registry has its kind or it is gone.
func (r *Registry) Object(ctx context.Context, reader client.Reader, src v1alpha1.Source) (client.Object, bool, error) {
	for _, t := range r.all() {
		if t.Kind() != src.Kind {
			continue
		}
		obj := t.NewObject()
		if err := reader.Get(ctx, types.NamespacedName{Namespace: src.Namespace, Name: src.Name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, false, nil
			}
			return nil, false, err
		}
		return obj, true, nil
	}
	return nil, false, nil
}
