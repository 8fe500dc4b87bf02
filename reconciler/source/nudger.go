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
	// every other tool object's.
	nudgeWorkers = 2
	// DefaultNudgeWait is how long a nudge waits, after the last
	// convergence of a proposal, for its StatefulSets that neither
	// converged nor got stuck (one outside the rollout controller's scope
	// never does).
	DefaultNudgeWait = 2 * time.Minute
)

// waitingMessage is logged (V(1)) when a tool object's nudge waits for the
// rest of its proposal.
const waitingMessage = "a StatefulSet of the proposal converged; waiting for the others before asking the GitOps tool to apply again"

// Nudger is the outcome.Sink that asks a tool to apply again once the
// StatefulSets one of its objects proposed were converged: once per
// proposal (the StatefulSets of one read, Proposal.Round), when each of them
// converged (Action Converged, Source.Kind the tool's) or got stuck (a
// policy denied it, its re-create failed: the tool's apply fails on it again
// anyway, and waiting would hold back the others), or at the latest the
// wait after the last convergence. Nudging per StatefulSet would make
// helm-controller upgrade once per StatefulSet, a release version each.
//
// Publish only records and queues: nudges call the tool's API, and a Sink
// must not block the rollout's reconcile on a remote system. The queue
// holds a tool object once however often it is published (client-go's
// workqueue). What it remembers is one entry per StatefulSet its tool
// proposed, dropped once the store holds no proposal of that round for it
// (pruned, dropped, replaced: the store notifies the rollout controller,
// whose next outcome or Forget for the StatefulSet comes here). A
// failed nudge is logged, not retried: Flux applies again on its own
// interval, and Argo CD's nudge remembers a sync it could not start and
// starts it on the Application's next change.
type Nudger struct {
	tool  Tool
	store *proposal.Store
	log   logr.Logger
	wait  time.Duration
	queue workqueue.TypedDelayingInterface[proposal.Owner]

	mu   sync.Mutex
	seen convergences
}

// NewNudger returns the Nudger of tool; it nudges once started (Start). A
// nudge waits at most wait (DefaultNudgeWait when not positive) after the
// last convergence for the rest of its proposal.
func NewNudger(tool Tool, store *proposal.Store, log logr.Logger, wait time.Duration) *Nudger {
	if wait <= 0 {
		wait = DefaultNudgeWait
	}
	return &Nudger{
		tool:  tool,
		store: store,
		log:   log,
		wait:  wait,
		queue: workqueue.NewTypedDelayingQueue[proposal.Owner](),
		seen:  convergences{},
	}
}

// Publish implements outcome.Sink.
func (n *Nudger) Publish(_ context.Context, o outcome.Outcome) {
	if o.Source.Kind != n.tool.Kind() {
		return
	}
	p, ok := n.store.Get(o.StatefulSet)
	n.mu.Lock()
	defer n.mu.Unlock()
	if !ok || p.Source.Kind != n.tool.Kind() {
		delete(n.seen, o.StatefulSet) // no longer this tool's proposal
		return
	}
	if n.seen.record(o, p, time.Now()) {
		n.queue.Add(proposal.OwnerOf(p.Source))
	}
}

// Forget implements outcome.Sink. A StatefulSet the rollout controller no
// longer finds may be one it re-created moments ago that its cache does
// not hold yet: what the Nudger knows of it goes with its proposal, not
// with the StatefulSet.
func (n *Nudger) Forget(statefulSet types.NamespacedName) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seen.forget(statefulSet, n.store.Get)
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

// next decides for one queued tool object and nudges it when due; false
// once the queue is shut down.
func (n *Nudger) next(ctx context.Context) bool {
	owner, shutdown := n.queue.Get()
	if shutdown {
		return false
	}
	defer n.queue.Done(owner)
	n.mu.Lock()
	due, recheck := n.seen.decide(n.store.Of(owner), time.Now(), n.wait)
	n.mu.Unlock()
	log := n.log.WithValues("source", owner.Kind+" "+owner.Namespace+"/"+owner.Name)
	if recheck > 0 {
		log.V(1).Info(waitingMessage, "for", recheck)
		n.queue.AddAfter(owner, recheck)
	}
	if due == nil {
		return true
	}
	log = log.WithValues("revision", due.Source.Revision)
	log.Info("asking the GitOps tool to apply again", "converged", due.Converged, "unconverged", due.Unconverged)
	nudgeCtx, cancel := context.WithTimeout(ctx, nudgeTimeout)
	defer cancel()
	if err := n.tool.Nudge(logr.NewContext(nudgeCtx, n.log), *due); err != nil {
		log.Error(err, "asking the GitOps tool to apply again")
	}
	return true
}
