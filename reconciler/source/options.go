package source

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Defaults of Options.
const (
	defaultRetryBaseDelay = 5 * time.Second
	defaultRetryMaxDelay  = 5 * time.Minute
	// defaultMaxObjects bounds the tool objects remembered; far more than
	// a cluster's Kustomizations or Applications usually are.
	defaultMaxObjects = 4096
)

// Options configure a tool's watcher.
type Options struct {
	// Name names the controller, e.g. "flux-kustomization"; required.
	Name string
	// Namespaces limits the tool objects watched; empty means all.
	Namespaces []string
	// Proposals receives the proposals for the cluster claimwarden runs
	// in; required.
	Proposals *proposal.Store
	// Spokes are the other clusters a tool object may apply to (hub and
	// spoke), by claimwarden's configured name: a Desired naming one is
	// read and proposed there. Set by the Registry; nil: none.
	Spokes Spokes
	// Select, when set, says whether this instance handles a tool object
	// (sharding): one it does not is left alone (what it proposed is
	// dropped), and one no instance handles is said so once, in note.
	// Set by the Registry; nil: every tool object is this instance's.
	Select func(obj client.Object) (handle bool, note string)
	// RetryBaseDelay and RetryMaxDelay bound the back-off while a source
	// cannot be read; defaults 5 s and 5 min.
	RetryBaseDelay, RetryMaxDelay time.Duration
	// MaxObjects bounds the tool objects whose revision and notes are
	// remembered; default 4096.
	MaxObjects int
	// NudgeWait bounds how long the tool's nudge after a convergence waits
	// for the other StatefulSets of the same proposal; default
	// DefaultNudgeWait (see Nudger).
	NudgeWait time.Duration
	// Related, when set, names the other tool objects whose reading
	// depends on obj (a Helm release's other versions): a change to obj
	// reconciles them too. Nil means each object stands alone.
	Related func(ctx context.Context, obj client.Object) []types.NamespacedName
	// Recorder records the events about tool objects: the controller's one
	// Recorder, whose per-object budget every controller shares (zero: one
	// of the manager's).
	Recorder outcome.Recorder
}

func (o Options) withDefaults() Options {
	if o.RetryBaseDelay <= 0 {
		o.RetryBaseDelay = defaultRetryBaseDelay
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = defaultRetryMaxDelay
	}
	if o.MaxObjects <= 0 {
		o.MaxObjects = defaultMaxObjects
	}
	return o
}

// Spoke is a cluster other than claimwarden's own that the tools apply to:
// where the StatefulSets a tool object desires there are read, and where
// their proposals go (the rollout controller of that cluster reads them).
type Spoke struct {
	// Reader reads the spoke's StatefulSets, uncached.
	Reader client.Reader
	// Proposals is the spoke's store.
	Proposals *proposal.Store
}

// Spokes are the configured spokes by name; "" is never one.
type Spokes map[string]Spoke

// Clients are what a Reconciler reads and reports with.
type Clients struct {
	// Cached reads tool objects (the manager's cache, which the watch fills).
	Cached client.Reader
	// Uncached reads StatefulSets, which must be current.
	Uncached client.Reader
	// Recorder records events about tool objects.
	Recorder outcome.Recorder
}
