package rollout

import (
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// FieldOwner is the server-side-apply field manager of every claimwarden write.
const FieldOwner = "claimwarden"

// Options configure the rollout controller.
type Options struct {
	// Namespaces limits the StatefulSets managed; empty means all namespaces.
	// The manager's cache is expected to be restricted the same way.
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
	// CommitStatuses, when set, receives the commit status of every rollout
	// whose proposal names a repository and a commit.
	CommitStatuses CommitStatuses
	// FluxNotifier, when set, also sends each outcome to Flux's
	// notification-controller as an event about the Kustomization that
	// applied the StatefulSet.
	FluxNotifier FluxNotifier
	// Sinks, when set, receives an Action Converged outcome each time a
	// StatefulSet was re-created with a proposal's templates (the GitOps
	// tools' Nudgers ask them to apply again).
	Sinks outcome.Sink
	// StatusContextPrefix starts every commit status context
	// (<prefix>/<namespace>/<statefulset>); default "claimwarden".
	StatusContextPrefix string
	// StatusTargetURL is linked from every commit status; optional.
	StatusTargetURL string
	// JournalKeySecret holds the key that seals the crash journal in
	// status.pendingRecreate (see converge.Record), so that whoever may write
	// that status cannot make the controller create a StatefulSet. Required;
	// read (and made, see LoadJournalKey) when first needed.
	JournalKeySecret types.NamespacedName
	// RetryBaseDelay and RetryMaxDelay bound the back-off after a patch the API
	// server rejected; a change to the StatefulSet or its claims retries at once.
	RetryBaseDelay, RetryMaxDelay time.Duration
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
	if o.StatusContextPrefix == "" {
		o.StatusContextPrefix = "claimwarden"
	}
	if o.PolicyRecheck <= 0 {
		o.PolicyRecheck = time.Minute
	}
	if o.RetryBaseDelay <= 0 {
		o.RetryBaseDelay = 10 * time.Second
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = 10 * time.Minute
	}
	return o
}
