package source

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

const (
	// nudgeTimeout bounds one nudge: Argo CD's reads the Application and
	// calls argocd-server, which may hang.
	nudgeTimeout = 30 * time.Second
	// nudgeWorkers nudge at once, so that one slow call does not hold back
	// every other StatefulSet's.
	nudgeWorkers = 2
)

// Nudger is the outcome.Sink that asks a tool to apply again once a
// StatefulSet it proposed was converged (Action Converged, Source.Kind the
// tool's). Publish only queues: nudges call the tool's API, and a Sink must
// not block the rollout's reconcile on a remote system. The queue holds a
// StatefulSet once however often it is published (client-go's workqueue),
// with the proposal to nudge for, so it is bounded by the StatefulSets
// converged and not yet nudged. A failed nudge is logged, not retried: Flux
// applies again on its own interval, and Argo CD's nudge remembers a sync
// it could not start and starts it on the Application's next change.
type Nudger struct {
	tool  Tool
	store *proposal.Store
	log   logr.Logger
	queue workqueue.TypedInterface[types.NamespacedName]

	mu sync.Mutex
	// wanted holds the proposal each queued StatefulSet was converged to.
	wanted map[types.NamespacedName]proposal.Proposal
}

// NewNudger returns the Nudger of tool; it nudges once started (Start).
func NewNudger(tool Tool, store *proposal.Store, log logr.Logger) *Nudger {
	return &Nudger{
		tool:   tool,
		store:  store,
		log:    log,
		queue:  workqueue.NewTyped[types.NamespacedName](),
		wanted: map[types.NamespacedName]proposal.Proposal{},
	}
}

// Publish implements outcome.Sink.
func (n *Nudger) Publish(_ context.Context, o outcome.Outcome) {
	if o.Action != outcome.Converged || o.Source.Kind != n.tool.Kind() {
		return
	}
	p, ok := n.store.Get(o.StatefulSet)
	if !ok || proposal.OwnerOf(p.Source) != proposal.OwnerOf(o.Source) {
		return // no longer this tool object's proposal: its own convergence nudges
	}
	n.mu.Lock()
	n.wanted[o.StatefulSet] = p
	n.mu.Unlock()
	n.queue.Add(o.StatefulSet)
}

// Forget implements outcome.Sink: a StatefulSet gone needs no nudge.
func (n *Nudger) Forget(statefulSet types.NamespacedName) {
	n.mu.Lock()
	delete(n.wanted, statefulSet)
	n.mu.Unlock()
}

// Start nudges until ctx ends (a manager.Runnable).
func (n *Nudger) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range nudgeWorkers {
		wg.Go(func() {
			for n.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	n.queue.ShutDown()
	wg.Wait()
	return nil
}

// next nudges for one queued StatefulSet; false once the queue is shut down.
func (n *Nudger) next(ctx context.Context) bool {
	key, shutdown := n.queue.Get()
	if shutdown {
		return false
	}
	defer n.queue.Done(key)
	n.mu.Lock()
	p, ok := n.wanted[key]
	delete(n.wanted, key)
	n.mu.Unlock()
	if !ok {
		return true // forgotten meanwhile
	}
	nudgeCtx, cancel := context.WithTimeout(ctx, nudgeTimeout)
	defer cancel()
	if err := n.tool.Nudge(logr.NewContext(nudgeCtx, n.log), p); err != nil {
		n.log.Error(err, "asking the GitOps tool to apply again", "statefulSet", key,
			"source", p.Source.Kind+" "+p.Source.Namespace+"/"+p.Source.Name, "revision", p.Source.Revision)
	}
	return true
}
