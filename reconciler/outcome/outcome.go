// Package outcome is what the rollout core tells the world: one Outcome
// record per StatefulSet and reconcile, which sinks (commit statuses, Flux
// events, Kubernetes events, the GitOps tools' re-triggers) turn into their
// own words. The core imports no sink; a sink imports this package and keeps
// its own memory (dedupe, supersede, seed after restart, retry), forgetting
// a StatefulSet when Forget says it is gone.
package outcome

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// State is where a rollout stands for the commit that proposed it, in the
// words commit statuses use.
type State string

// States of a rollout.
const (
	// Pending: claims are being changed, or the rollout just started.
	Pending State = "pending"
	// Success: every claim is compatible with its template.
	Success State = "success"
	// Failure: a policy denied the change.
	Failure State = "failure"
	// Error: the rollout is blocked otherwise (a rejected patch, a failed
	// resize, an invalid template) or was superseded before it finished.
	Error State = "error"
)

// Action says what an Outcome reports.
type Action string

// Actions.
const (
	// Reconciled is the rollout's state after a reconcile: State, Reason
	// and Message come from its VolumeClaimRollout's conditions. It is
	// published on every reconcile that reaches the report phase
	// (level-triggered), so a sink that lost one gets it again; sinks say
	// each change once.
	Reconciled Action = "Reconciled"
	// Converged: the StatefulSet was re-created with the proposal's
	// templates, its Pods kept. The GitOps tool that proposed it may now
	// apply again, once the other StatefulSets of the same proposal
	// converged too (source.Nudger).
	Converged Action = "Converged"
	// ConvergeFailed: re-creating the StatefulSet failed; Message says why.
	ConvergeFailed Action = "ConvergeFailed"
)

// Outcome is one record of what a rollout did or where it stands.
type Outcome struct {
	Action Action
	// StatefulSet is the rollout's StatefulSet; UID and Labels as last
	// read (a sink finds from them the object events are about, or the
	// GitOps object that applied it).
	StatefulSet types.NamespacedName
	UID         types.UID
	Labels      map[string]string
	// Source names the proposal: the GitOps object (or the StatefulSet
	// itself), the repository (without user information) and the revision.
	Source v1alpha1.Source
	// State, Reason (a v1alpha1 condition reason) and Message are the
	// rollout's state; Message is whole, sinks shorten it to their limits.
	State   State
	Reason  string
	Message string
	// Denials are the policies' denials of the proposal (its claims' and
	// the StatefulSet-level change's), each once, in the order asked; nil
	// when none, or when the reconcile did not ask (a stall).
	Denials []Denial
	// Recorded is the commit status the VolumeClaimRollout records as
	// posted: the durable memory a commit-status sink seeds from after a
	// restart. Nil when none.
	Recorded *v1alpha1.CommitStatus
	// Previous is the state the VolumeClaimRollout recorded before this
	// reconcile (nil when it recorded none): after a restart, what a sink
	// without memory takes as said before. A sink's own memory is fresher.
	Previous *Previous
}

// Denial is one policy's denial, as the policies said it: sinks know no
// policy engine.
type Denial struct {
	Policy, Message string
}

// Previous is a rollout state recorded earlier.
type Previous struct {
	Source  v1alpha1.Source
	State   State
	Message string
}

// Sink receives outcomes. Publish must not block on a remote system (queue
// and return); it is called from reconcile workers.
type Sink interface {
	Publish(ctx context.Context, o Outcome)
	// Forget drops what the sink remembers about a StatefulSet that is gone
	// or no longer managed.
	Forget(statefulSet types.NamespacedName)
}

// Sinks fans outcomes out to every sink, in order.
type Sinks []Sink

// Publish implements Sink.
func (s Sinks) Publish(ctx context.Context, o Outcome) {
	for _, sink := range s {
		sink.Publish(ctx, o)
	}
}

// Forget implements Sink.
func (s Sinks) Forget(statefulSet types.NamespacedName) {
	for _, sink := range s {
		sink.Forget(statefulSet)
	}
}
