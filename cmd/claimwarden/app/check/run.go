// Package check is `claimwarden check`: it compares proposed StatefulSets
// with the current state (base manifests, or a live cluster read-only),
// asks the controller's policies the controller's questions
// (reconciler/plan.Questions) and reports the verdicts as a plan (table,
// JSON, Markdown), as commit statuses and as a pull-request comment.
package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"k8s.io/client-go/rest"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/policies"
)

// Options say what to check against what.
type Options struct {
	// Files are the proposed manifests: files, directories, or "-" for Stdin.
	Files []string
	// Kustomizations are directories whose kustomize build is proposed,
	// built as the Flux integration builds them.
	Kustomizations []string
	Stdin          io.Reader
	// Namespace is the namespace of namespaced objects that name none, as
	// kubectl -n and an Argo CD Application's destination give it; default
	// "default".
	Namespace string
	// TargetNamespace, when set, is the namespace of every namespaced
	// object, proposed and base, whatever it names, as a Flux
	// Kustomization's spec.targetNamespace sets it.
	TargetNamespace string
	// AllowNamespaceMove checks a StatefulSet that leaves the current
	// state's namespace for another as new there; otherwise that is an
	// error, since it is most likely a namespace the proposal lost.
	AllowNamespaceMove bool

	// Base are manifests standing for the current state (offline); Cluster
	// reads it from a cluster instead (get and list only). Exactly one.
	Base    []string
	Cluster *rest.Config
	// AllowNew accepts Base manifests without StatefulSets, every proposed
	// one being new; otherwise such a base is an error, since an empty or
	// wrong base (a failed `git show`) would pass every change.
	AllowNew bool
	// Limits bound the reading of the proposed manifests, and separately of
	// the base ones.
	Limits manifests.Limits

	// Policies decide; required.
	Policies policies.Evaluator
	// Strategy applies to StatefulSets without the update-strategy
	// annotation; default InPlace.
	Strategy v1alpha1.UpdateStrategy
	// Repository and Revision are the proposal's source in the policy
	// input; when empty, a StatefulSet's claimwarden.dev annotations are.
	Repository, Revision string
	// ContextPrefix starts commit status contexts; default "claimwarden".
	ContextPrefix string
	// Prices cost the changes (PricesFromParams); none: no costs shown.
	Prices Prices
}

func (o Options) withDefaults() Options {
	o.Namespace = cmp.Or(o.Namespace, manifests.DefaultNamespace)
	o.Strategy = cmp.Or(o.Strategy, v1alpha1.InPlace)
	o.ContextPrefix = cmp.Or(o.ContextPrefix, v1alpha1.ControllerName)
	return o
}

// Run checks the proposal. Its errors are the input's (unreadable or
// invalid manifests, an unreachable cluster): a denial is a verdict in the
// report, not an error.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()

	proposed, sets, ignoredLabels, err := readProposal(ctx, o)
	if err != nil {
		return nil, err
	}
	mwarns, err := proposed.result()
	if err != nil {
		return nil, err
	}
	report := &Report{SchemaVersion: SchemaVersion, PolicyRevision: o.Policies.Revision(), StatefulSets: []StatefulSet{}, Warnings: []Warning{}}
	report.addWarnings(mwarns)

	cur, err := currentState(ctx, o, sets, report)
	if err != nil {
		return nil, err
	}
	after, err := applyProposed(cur, proposed)
	if err != nil {
		return nil, err
	}

	e := &evaluator{
		policies: o.Policies, cur: cur, after: after, strategy: o.Strategy,
		repository: o.Repository, revision: o.Revision, contextPrefix: o.ContextPrefix,
		ignoredLabels: ignoredLabels,
		noun:          map[string]string{ModeBase: "base", ModeCluster: "cluster"}[report.Mode],
		prices:        o.Prices, defaultClass: after.defaultClass(),
	}
	results, err := e.all(ctx, sets)
	if err != nil {
		return nil, err
	}
	report.conclude(results, len(sets) > 0, len(after.storageClasses) > 0)
	return report, nil
}

// validate refuses Options that cannot run.
func (o Options) validate() error {
	switch {
	case o.Policies == nil:
		return errors.New("check: Options.Policies is nil")
	case (o.Cluster == nil) == (len(o.Base) == 0):
		return errors.New("check: compare with base manifests or a cluster, exactly one of them")
	case count(slices.Concat(o.Files, o.Base), manifests.Stdin) > 1:
		return errors.New(`check: "-" (stdin) can be read once only`)
	}
	return o.validateNamespaces()
}

// currentState reads what the proposal is compared with, the cluster or
// the base manifests, sets the report's mode and adds its warnings. A
// StatefulSet that moves to another namespace is an error unless allowed.
func currentState(ctx context.Context, o Options, sets []proposal, report *Report) (*current, error) {
	var (
		cur   *current
		index map[string]placement
		err   error
	)
	if o.Cluster != nil {
		report.Mode = ModeCluster
		var warns []Warning
		cur, index, warns, err = clusterState(ctx, o.Cluster, sets, !o.AllowNamespaceMove)
		report.Warnings = append(report.Warnings, warns...)
	} else {
		report.Mode = ModeBase
		cur, index, err = baseState(o, len(sets) > 0, report)
	}
	if err != nil || o.AllowNamespaceMove {
		return cur, err
	}
	return cur, namespaceMoves(index, sets, map[string]string{ModeBase: "the base", ModeCluster: "the cluster"}[report.Mode])
}

// baseState reads the base manifests as the current state, and indexes
// their StatefulSets for namespaceMoves.
func baseState(o Options, proposesStatefulSets bool, report *Report) (*current, map[string]placement, error) {
	cur := newCurrent()
	index := map[string]placement{}
	var bound error
	base := &input{namespaces: o.namespacing(), keep: func(s manifests.StatefulSet, c candidate) {
		index[s.Namespace+"/"+s.Name] = placement{namespace: s.Namespace, name: s.Name, Location: s.Location, namespaceFrom: c.namespaceFrom}
		if err := cur.addBase(s, c.JSON()); err != nil && bound == nil {
			bound = err
		}
	}}
	if err := base.read(o.Limits, o.Base, o.Stdin, "--base -"); err != nil {
		return nil, nil, err
	}
	bwarns, err := base.result()
	if err != nil {
		return nil, nil, err
	}
	if base.statefulSets == 0 && proposesStatefulSets && !o.AllowNew {
		return nil, nil, errors.New("the base holds no StatefulSet, so every proposed one would be new and pass unchecked: " +
			"check the base (a failed `git show` writes nothing), or give --allow-new if the StatefulSets are new")
	}
	report.addWarnings(bwarns)
	if err := cur.setBaseClusterObjects(base.clusterObjects); err != nil {
		return nil, nil, err
	}
	return cur, index, bound
}

// applyProposed counts what is used of the quotas, then adds the
// proposal's own StorageClasses, Namespaces and ResourceQuotas, since they
// are applied with it: they can add denials, never lift one.
func applyProposed(cur *current, proposed *input) (*current, error) {
	if err := cur.countQuotaUse(); err != nil {
		return nil, err
	}
	return cur.withProposed(proposed.clusterObjects)
}

// conclude puts the results into the report, sorted, with the summary, the
// total cost and the warnings about what the check could not see.
func (r *Report) conclude(results []StatefulSet, proposesStatefulSets, knowsClasses bool) {
	slices.SortFunc(results, func(a, b StatefulSet) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	r.StatefulSets = results
	r.summarise()
	if r.Cost = totalCost(results); r.Cost != nil {
		for _, class := range r.Cost.Unpriced {
			r.Warnings = append(r.Warnings, Warning{Message: fmt.Sprintf("StorageClass %q has no price in policies.params.%s: its claims count in the capacity, not in the monthly cost", class, storageClassPricesParam)})
		}
	}
	if !proposesStatefulSets {
		r.Warnings = append(r.Warnings, Warning{Message: "the proposed manifests hold no StatefulSet (apps/v1): nothing to check"})
	}
	if r.Mode == ModeBase && !knowsClasses && r.grows() {
		r.Warnings = append(r.Warnings, Warning{Message: "no StorageClass in the base or proposed manifests, so policies cannot know whether a class allows expansion (expansion-allowed denies); add the cluster's StorageClasses to --base (kubectl get storageclass -o yaml)"})
	}
}

func count(s []string, v string) int {
	n := 0
	for _, e := range s {
		if e == v {
			n++
		}
	}
	return n
}

// readProposal reads the proposed manifests and kustomize builds: their
// StatefulSets, and the template label keys each build injects, by the
// file name its objects carry.
func readProposal(ctx context.Context, o Options) (*input, []proposal, map[string][]string, error) {
	var sets []proposal
	in := &input{namespaces: o.namespacing(), keep: func(s manifests.StatefulSet, c candidate) {
		sets = append(sets, proposal{Location: s.Location, namespace: s.Namespace, name: s.Name, namespaceFrom: c.namespaceFrom, json: c.JSON()})
	}}
	if len(o.Files) > 0 {
		if err := in.read(o.Limits, o.Files, o.Stdin, "-f -"); err != nil {
			return nil, nil, nil, err
		}
	}
	ignored := map[string][]string{}
	for _, dir := range o.Kustomizations {
		built, keys, err := buildKustomization(ctx, dir)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, obj := range built {
			in.add(obj, in.candidate(obj))
		}
		if len(built) > 0 {
			ignored[built[0].File] = keys
		}
	}
	return in, sets, ignored, nil
}

func (r *Report) addWarnings(ws []manifests.Warning) {
	for _, w := range ws {
		r.Warnings = append(r.Warnings, Warning{File: w.File, Line: w.Line, Message: w.Message})
	}
}

// summarise counts the StatefulSets and claims and sets the verdict.
func (r *Report) summarise() {
	s := Summary{StatefulSets: len(r.StatefulSets), Verdict: NothingToDo}
	for _, st := range r.StatefulSets {
		switch st.Status {
		case StatusChanged:
			s.Changed++
		case StatusUnchanged:
			s.Unchanged++
		case StatusNew:
			s.New++
		case StatusIgnored:
			s.Ignored++
		}
		for _, c := range st.Claims {
			s.Claims++
			if c.Verdict == Denied {
				s.Denied++
			} else {
				s.Allowed++
			}
		}
		switch {
		case st.Verdict == Denied:
			s.Verdict = Denied
		case st.Verdict == Allowed && s.Verdict == NothingToDo:
			s.Verdict = Allowed
		}
	}
	r.Summary = s
}

// grows reports whether any claim would grow.
func (r *Report) grows() bool {
	for _, st := range r.StatefulSets {
		for _, c := range st.Claims {
			if c.ToBytes > c.FromBytes {
				return true
			}
		}
	}
	return false
}
