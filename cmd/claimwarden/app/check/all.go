package check

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/reconciler/assess"
)

// all evaluates every StatefulSet, keeping input order, in two passes: what
// each proposal grows, summed by namespace, then each assessment with the
// others of its namespace in flight, as the controller decides a proposal
// with the others it is rolling out. Merged together, a pull request's
// StatefulSets must fit their quotas together.
func (e *evaluator) all(ctx context.Context, sets []proposal) ([]StatefulSet, error) {
	own := make([]assess.Growth, len(sets))
	namespaces := make([]string, len(sets))
	err := each(sets, false, func(i int, p manifests.StatefulSet) (err error) {
		namespaces[i] = p.Namespace
		own[i], err = e.growth(p)
		return err
	})
	if err != nil {
		return nil, err
	}
	byNamespace := map[string]assess.Growth{}
	for i, g := range own {
		sum := byNamespace[namespaces[i]]
		if sum == nil {
			sum = assess.Growth{}
			byNamespace[namespaces[i]] = sum
		}
		sum.Add(g)
	}
	out := make([]StatefulSet, len(sets))
	err = each(sets, true, func(i int, p manifests.StatefulSet) (err error) {
		others := assess.Growth{}
		others.Add(byNamespace[p.Namespace])
		for r, n := range own[i] {
			if others[r] -= n; others[r] == 0 {
				delete(others, r)
			}
		}
		out[i], err = e.one(ctx, p, others)
		return err
	})
	return out, err
}

// growth is what the proposal p still has to grow; nil when the
// controller would not assess it (new, ignored, templates unchanged).
func (e *evaluator) growth(p manifests.StatefulSet) (assess.Growth, error) {
	var r StatefulSet
	live, done, err := e.prepare(p, &r)
	if err != nil || done {
		return nil, err
	}
	in, _, err := e.input(p, live)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Location, err)
	}
	g, err := assess.GrowthOf(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Location, err)
	}
	return g, nil
}

// each calls fn with every proposal typed, in parallel (the policy engine
// is safe for concurrent use); the first error in input order is returned.
// last lets each proposal's JSON go once typed, as results take its place.
func each(sets []proposal, last bool, fn func(int, manifests.StatefulSet) error) error {
	errs := make([]error, len(sets))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				p, err := sets[i].typed()
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", sets[i].Location, err)
					continue
				}
				if last {
					sets[i].json = nil
				}
				errs[i] = fn(i, p)
			}
		})
	}
	for i := range sets {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
