package policies

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/topdown"
	"golang.org/x/sync/semaphore"
)

// DefaultMemoryBudget is the default Options.MemoryBudgetBytes: with the
// controller's ~100 MiB working set and the GC's headroom it keeps the
// process within the shipped Deployment's 512Mi limit.
const DefaultMemoryBudget = 128 << 20

// budgetTick is how often the heap is sampled while evaluations run: a
// policy building values at memory speed (a few GB/s on two cores) gets
// a few MiB past the budget before it is noticed.
const budgetTick = time.Millisecond

// budgetCheckBytes is the smallest builtin result that checks the budget
// before it is built: building it costs far more than reading the heap
// metric (~0.2µs).
const budgetCheckBytes = 64 << 10

// heapMetric is the heap's live and not yet swept objects: what the
// evaluations hold plus the garbage they left, i.e. what the process
// would have to keep resident. runtime/metrics reads it without stopping
// the world, unlike runtime.ReadMemStats.
const heapMetric = "/memory/classes/heap/objects:bytes"

// errMemoryBudget is the cause of an evaluation cancelled by the guard.
var errMemoryBudget = errors.New("memory budget exceeded")

// memoryGuard bounds the memory of all evaluations together. OPA has no
// memory limit for a query, and value_limits.go bounds each builtin's
// result only: a comprehension collecting thousands of such results, or
// a cross product of two ranges, builds gigabytes within the timeout.
// Go cannot tell which goroutine holds what, so the guard watches the
// whole heap instead: the first of a group of concurrent evaluations
// takes the heap as baseline, a watchdog samples the heap while any of
// them runs, and if it grows more than the budget over the baseline every
// running evaluation is cancelled (the policy set is the same for all of
// them, so a policy that outgrows the budget for one claim does for the
// others); the builtins that build large values sample the heap too
// (checkBudget). A breach is drained: its garbage is collected before
// the next evaluation takes a baseline.
type memoryGuard struct {
	budget uint64
	// slots admits at most as many evaluations as there are cores: they
	// are CPU-bound, so more would not be faster, but each may be inside
	// a builtin (up to Options.ValueLimitBytes) that cannot be stopped
	// halfway, which is what overshoots the budget. After a breach the
	// watchdog takes every slot to wait for the cancelled evaluations.
	slots *semaphore.Weighted
	size  int64

	mu      sync.Mutex
	running map[uint64]admission
	next    uint64 // key of the next admission in running
	ceiling uint64 // baseline + budget of the current group
	// drained is non-nil from a breach until its evaluations have returned
	// and their garbage is collected, and closed then. Evaluations wait
	// for it before they start: measured against a heap full of the
	// breach's garbage, each breach would raise the ceiling by a budget.
	drained  chan struct{}
	watching bool
}

func newMemoryGuard(budget int64, slots int) *memoryGuard {
	return &memoryGuard{
		budget:  uint64(budget),
		slots:   semaphore.NewWeighted(int64(slots)),
		size:    int64(slots),
		running: map[uint64]admission{},
	}
}

// admission is one running evaluation: its context and OPA's Cancel.
type admission struct {
	cancel context.CancelCauseFunc
	stop   topdown.Cancel
}

// stopBudget cancels the evaluation for the budget. It stops OPA itself
// too: the context would only stop it from a goroutine of its own
// (context.AfterFunc in eval), which on busy cores starts milliseconds
// later, time enough to build another budget's worth.
func (a admission) stopBudget() {
	a.cancel(errMemoryBudget)
	a.stop.Cancel()
}

// admit waits for a slot (and for a drain to end) and returns a context
// the guard cancels (cause errMemoryBudget, stopping stop as well) when
// the budget is exceeded; release must be called when the evaluation is
// over. It fails only when ctx ends first.
func (g *memoryGuard) admit(ctx context.Context, stop topdown.Cancel) (context.Context, func(), error) {
	ctx, cancel := context.WithCancelCause(ctx)
	a := admission{cancel: cancel, stop: stop}
	for {
		if err := g.slots.Acquire(ctx, 1); err != nil {
			cancel(nil)
			return nil, nil, err
		}
		key, drained := g.register(a)
		if drained == nil {
			return context.WithValue(ctx, guardKey{}, g), func() { g.unregister(key); cancel(nil); g.slots.Release(1) }, nil
		}
		g.slots.Release(1)
		select {
		case <-drained:
		case <-ctx.Done():
			cancel(nil)
			return nil, nil, ctx.Err()
		}
	}
}

// register adds a to the running evaluations, the first of a group taking
// the baseline, unless a drain is under way: then it returns its end.
func (g *memoryGuard) register(a admission) (key uint64, drained <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.drained != nil {
		return 0, g.drained
	}
	if len(g.running) == 0 {
		g.ceiling = heapBytes() + g.budget
	}
	key = g.next
	g.next++
	g.running[key] = a
	if !g.watching {
		g.watching = true
		go g.watch()
	}
	return key, nil
}

func (g *memoryGuard) unregister(key uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.running, key)
}

// watch samples the heap until no evaluation runs, and ends the drains.
func (g *memoryGuard) watch() {
	t := time.NewTicker(budgetTick)
	defer t.Stop()
	for range t.C {
		busy, draining := g.check()
		if draining {
			g.collect()
		}
		if !busy {
			return
		}
	}
}

// check samples the heap (see sample). busy is false once no evaluation
// runs and no drain is under way; the watchdog then stops.
func (g *memoryGuard) check() (busy, draining bool) {
	g.sample()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.running) == 0 && g.drained == nil {
		g.watching = false
		return false, false
	}
	return true, g.drained != nil
}

// sample cancels every running evaluation and starts a drain when the
// heap is over the ceiling.
func (g *memoryGuard) sample() {
	heap := heapBytes()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.drained != nil || len(g.running) == 0 || heap <= g.ceiling {
		return
	}
	for _, a := range g.running {
		a.stopBudget()
	}
	g.drained = make(chan struct{})
}

type guardKey struct{}

// checkBudget is called by the builtins of value_limits.go before they
// build a value of size bytes: a policy building large values builds
// them faster than the watchdog is scheduled on busy cores (up to Go's
// 10 ms time slice), so large values are checked where they are built.
// The error (or the watchdog's cancellation) denies for the budget.
func checkBudget(ctx context.Context, size float64) error {
	g, ok := ctx.Value(guardKey{}).(*memoryGuard)
	if !ok || size < budgetCheckBytes {
		return nil
	}
	g.sample()
	if errors.Is(context.Cause(ctx), errMemoryBudget) {
		return errMemoryBudget
	}
	return nil
}

// collect ends a drain: it waits for the cancelled evaluations to return
// (taking every slot), collects what they built, and lets the waiting
// evaluations in.
func (g *memoryGuard) collect() {
	_ = g.slots.Acquire(context.Background(), g.size) // fails only when its context ends
	defer g.slots.Release(g.size)
	runtime.GC()
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.drained)
	g.drained = nil
}

// exceeded says whether ctx was cancelled for the budget, and describes it.
func (g *memoryGuard) exceeded(ctx context.Context) (string, bool) {
	if !errors.Is(context.Cause(ctx), errMemoryBudget) {
		return "", false
	}
	return fmt.Sprintf("policy evaluation stopped: memory budget of %d MiB exceeded "+
		"(shared by the evaluations running at once)", g.budget>>20), true
}

// heapBytes reads heapMetric.
func heapBytes() uint64 {
	s := [1]metrics.Sample{{Name: heapMetric}}
	metrics.Read(s[:])
	return s[0].Value.Uint64()
}
