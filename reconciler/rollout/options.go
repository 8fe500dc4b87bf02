package rollout

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Options configure the rollout controller.
type Options struct {
	// ClusterName names the cluster the controller rolls out on, when it
	// is not the manager's own ("" = the manager's): its controller is
	// volumeclaimrollout-<name> and its metrics' cluster label <name>
	// (in-cluster for the manager's own). Required for another cluster.
	ClusterName string
	// Namespaces limits the StatefulSets managed; empty means all namespaces.
	// The cluster's cache is expected to be restricted the same way.
	Namespaces []string
	// LabelSelector limits the StatefulSets managed; nil means all.
	LabelSelector labels.Selector
	// Strategy applies to StatefulSets without the update-strategy annotation.
	Strategy v1alpha1.UpdateStrategy
	// Workers is how many StatefulSets are reconciled at once; default 1.
	Workers int
	// MaxConcurrentPatches bounds the claims of one StatefulSet being changed at once.
	MaxConcurrentPatches int
	// MaxClaimsPerStatefulSet bounds templates × replicas: a StatefulSet
	// with more is Stalled before any work (diff.Input.MaxClaims); values
	// below 1 mean diff.DefaultMaxClaims.
	MaxClaimsPerStatefulSet int
	// RestartForExpansion lets the controller evict, one at a time, the
	// Pods whose claims wait for a file system resize that needs the volume
	// mounted again, in StatefulSets without the restart-for-expansion
	// annotation; off by default: such claims are reported and wait.
	RestartForExpansion bool
	// Policies decide every claim change before it is patched; required.
	Policies policies.Evaluator
	// PolicyRecheck is how long a denial stands before the policies are
	// asked again although nothing changed (policies may read the clock).
	PolicyRecheck time.Duration
	// PolicyChanges, when set, signals that the policies changed: every
	// StatefulSet is then evaluated again.
	PolicyChanges <-chan struct{}
	// Proposals, when set, holds desired StatefulSets from GitOps sources
	// (Flux, Argo CD): a proposal whose templates differ from the live
	// StatefulSet is gated, the StatefulSet converged to it and the claims
	// patched; its source names the commit that gets the status.
	Proposals *proposal.Store
	// Authority checks that a proposal's authority (Proposal.Authority)
	// may make each step's writes before the first of them; a proposal
	// with an authority and no checker writes nothing.
	Authority authority.Checker
	// AuthorityRecheck is how soon a step its authority may not make is
	// asked about again; default 30 s.
	AuthorityRecheck time.Duration
	// Sinks receive the outcome of every reconcile and convergence (commit
	// statuses, Flux events, the GitOps tools' re-triggers); the
	// controller's own Kubernetes events sink comes first.
	Sinks []outcome.Sink
	// EventMemory bounds the StatefulSets the event sink remembers what it
	// said about; default outcome.DefaultEventMemory.
	EventMemory int
	// JournalKeySecret holds the key that seals the crash journal in
	// status.pendingRecreate (see converge.Record), so that whoever may write
	// that status cannot make the controller create a StatefulSet. Required;
	// read (and made, see LoadJournalKey) when first needed.
	JournalKeySecret types.NamespacedName
	// RetryBaseDelay and RetryMaxDelay bound the back-off after a patch the API
	// server rejected; a change to the StatefulSet or its claims retries at once.
	RetryBaseDelay, RetryMaxDelay time.Duration
	// Writer applies the claim patches; the integrations that grow claims
	// or write status.autoresize share it; it must write to the cluster
	// rolled out on. Default: one of that cluster's client.
	Writer *Writer
	// Recorder records the rollout's events: the controller's one
	// Recorder, whose per-object budget every controller shares; it must
	// record on the cluster rolled out on, where the StatefulSets are.
	// Default: one of that cluster's.
	Recorder outcome.Recorder
	// Shard, when set, says whether this instance rolls out the
	// StatefulSet key (sharding: several instances split the tool
	// objects, and each StatefulSet is rolled out by one only); one it
	// does not is left alone, its VolumeClaimRollout too. Nil: all.
	Shard func(ctx context.Context, key types.NamespacedName) (bool, error)
	// WorkloadAnnotations lists where a StatefulSet's own repository and
	// revision annotations are used (commit statuses, policies); nil: nowhere.
	WorkloadAnnotations *WorkloadAnnotations
}

func (o Options) withDefaults() Options {
	if o.Strategy == "" {
		o.Strategy = v1alpha1.InPlace
	}
	if o.MaxConcurrentPatches < 1 {
		o.MaxConcurrentPatches = 1
	}
	if o.LabelSelector == nil {
		o.LabelSelector = labels.Everything()
	}
	if o.PolicyRecheck <= 0 {
		o.PolicyRecheck = time.Minute
	}
	if o.AuthorityRecheck <= 0 {
		o.AuthorityRecheck = 30 * time.Second
	}
	if o.RetryBaseDelay <= 0 {
		o.RetryBaseDelay = 10 * time.Second
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = 10 * time.Minute
	}
	return o
}
