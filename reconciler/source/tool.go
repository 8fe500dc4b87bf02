// Package source is the one way a GitOps tool's desired StatefulSets become
// proposals, and the one way the tool is asked to apply again once a
// StatefulSet was converged. An integration implements Tool (how to read
// its tool's object and desired StatefulSets, how to nudge the tool); the
// Reconciler does the rest for every tool alike: proposing, pruning,
// dropping what Git no longer asks for, saying things once, forgetting.
// The Registry holds the enabled tools for the Reconcilers and for
// autoresize, which asks those that are AtRest, Parent and Locator too.
package source

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// A GitOps tool is a few small interfaces, each one concern, composed as
// controller-runtime composes its own (client.Client of Reader, Writer,
// ...): the source reconciler needs a Tool; autoresize asks the tools of
// the Registry that are AtRest, Locator or Parent too.

// Reader reads a tool's objects and the StatefulSets they desire.
type Reader interface {
	// Kind is the Source kind of the tool's proposals, e.g. "Kustomization".
	Kind() string
	// NewObject returns an empty tool object (typed, or unstructured with
	// its kind set) to watch and read into.
	NewObject() client.Object
	// Read says, without fetching anything expensive, where obj stands.
	// An error is retried with back-off.
	Read(ctx context.Context, obj client.Object) (Reading, error)
	// Desired reads the desired StatefulSets of a Blocked obj at the
	// reading's revision. An error means the source cannot be read now:
	// the rollouts say so and the read is retried with back-off (see
	// ReadError for the event it is reported with).
	Desired(ctx context.Context, obj client.Object) (Desired, error)
}

// Owner says whether a tool object applies a StatefulSet, and as whom.
type Owner interface {
	// Authority is the identity the tool applies obj's desired state as
	// (Proposal.Authority): a service account the object names, or the
	// one the tool's lockdown defaults to; nil when the tool applies as
	// itself. An error is retried with back-off and nothing is proposed.
	Authority(ctx context.Context, obj client.Object) (*v1alpha1.Identity, error)
	// Manages says whether the live StatefulSet is one the tool applies
	// for obj (its inventory, its release, its project's destinations):
	// nil when it is; otherwise why not, and the StatefulSet is left
	// alone whatever obj's desired state says. Only the tool's own
	// records count, never what the desired state claims about itself.
	Manages(ctx context.Context, obj client.Object, live *appsv1.StatefulSet) error
}

// Reapplier asks a tool to apply again.
type Reapplier interface {
	// Nudge asks the tool to apply again once the StatefulSets one of its
	// objects proposed were converged (Nudge says which, and which not):
	// once per proposal, not per StatefulSet. It may call remote APIs; the
	// Nudger bounds it with a timeout.
	Nudge(ctx context.Context, n Nudge) error
}

// Forgetter is a tool that remembers something per tool object itself;
// the Reconciler calls Forget when a tool object is gone or skipped.
type Forgetter interface {
	// Forget drops what the tool remembers about the tool object obj.
	Forget(obj types.NamespacedName)
}

// Tool is what the source Reconciler and its Nudger need of a GitOps
// tool; a Forgetter too when the tool remembers per object.
type Tool interface {
	Reader
	Owner
	Reapplier
}

// Nudge is what a tool object is asked to apply again for: the StatefulSets
// of its newest proposal (one read, Proposal.Round) each converged, or will
// not converge without a change (a policy denied it, its re-create failed,
// or it did not converge within the Nudger's wait).
type Nudge struct {
	// Source names the tool object, and the revision and chart of its
	// newest proposal.
	Source v1alpha1.Source
	// Revisions are the tool's revisions of its newest proposal
	// (Proposal.Revisions): what to apply again.
	Revisions []string
	// Converged are the StatefulSets converged since the object's last
	// nudge, sorted; never empty.
	Converged []types.NamespacedName
	// Unconverged are the other StatefulSets of the newest proposal,
	// sorted: the tool's apply fails on them again.
	Unconverged []types.NamespacedName
}

// State is where a tool object stands.
type State int

// States.
const (
	// Idle: the tool applied its newest revision; nothing is blocked, and a
	// proposal never converged (denied, then reverted in Git) is dropped.
	Idle State = iota
	// Blocked: the tool cannot apply Reading.Revision; its desired
	// StatefulSets are read (once per Reading.Key) and proposed.
	Blocked
	// Skipped: the tool object is not to be acted on (Flux: suspended);
	// what it proposed is dropped. Say why in a Note.
	Skipped
	// Waiting: nothing to do now, and nothing to drop (the object cannot be
	// read); the next change of the object brings it back.
	Waiting
)

// Reading is where a tool object stands.
type Reading struct {
	State State
	// Revision names, for people, the revision the tool attempts (Flux:
	// main@sha1:…; Argo CD: the revisions of its sources, joined by ",").
	Revision string
	// Key identifies what a Blocked object's desired StatefulSets depend
	// on (the revision and the object's spec): they are read once per key.
	Key string
	// Notes are said once each (an event and a log line), whatever the
	// state: said again when their message changes, or when they come back
	// after a reading without them.
	Notes []Note
}

// Note is something said once about a tool object.
type Note struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type, Reason, Message string
}

// Desired is what a Blocked tool object's source renders.
type Desired struct {
	// Waiting, when set, says why nothing can be read yet (logged); the
	// tool's next step brings the object back. Nothing else is read.
	Waiting string
	// Cluster is the spoke the tool object applies to, by claimwarden's
	// configured name (Options.Spokes); "" is the cluster claimwarden runs
	// in. The Candidates' live StatefulSets are read there and their
	// proposals go to its rollout controller.
	Cluster string
	// Repository and Revision are where commit statuses go (Source).
	Repository, Revision string
	// Chart is the Helm chart (name@version) the StatefulSets were rendered
	// from, for a Helm source (Source.Chart).
	Chart string
	// Revisions are the tool's revisions read, one per source
	// (Proposal.Revisions).
	Revisions []string
	// Candidates are the desired StatefulSets that may be what blocks the
	// tool: each whose volumeClaimTemplates differ from the live
	// StatefulSet's is proposed.
	Candidates []*appsv1.StatefulSet
	// Others are StatefulSets the source also holds but which do not block
	// the tool: their proposals are kept, none is made.
	Others []types.NamespacedName
	// IgnoredLabels are template label keys the tool's build injects into
	// every template (Proposal.IgnoredLabels).
	IgnoredLabels []string
	// NothingToDo, when set, is said once (Normal, ReasonNothingToDo)
	// when no StatefulSet is proposed; otherwise that is only logged.
	NothingToDo string
}

// ReadError is a failure of Tool.Desired with the event reason and action
// it is reported with on the tool object. Other errors are reported with
// ReasonReadFailed and ActionRead.
type ReadError struct {
	Reason, Action string
	Err            error
}

func (e *ReadError) Error() string { return e.Err.Error() }

func (e *ReadError) Unwrap() error { return e.Err }
