// Package proposal carries desired StatefulSets from GitOps sources (Flux
// Kustomizations, Argo CD Applications) to the rollout controller. Sources
// put proposals into a Store; the rollout controller reads the newest one for
// each StatefulSet, so a newer revision simply replaces an older one.
package proposal

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// Proposal is a desired StatefulSet and where it came from.
type Proposal struct {
	// StatefulSet is the desired object as the source renders it. Only its
	// volumeClaimTemplates are taken; the rest of the live object stays, so
	// converging never restarts a Pod (the GitOps tool applies the rest).
	StatefulSet *appsv1.StatefulSet
	// Source names the GitOps object, the repository and the revision.
	Source v1alpha1.Source
	// IgnoredLabels are template label keys the source's build injects into
	// every template; they are never copied onto claims.
	IgnoredLabels []string
	// Revisions are the tool's revisions the proposal was read at, one per
	// source of the tool object (an Argo CD Application may have several);
	// the tool's nudge after the convergence asks for exactly these.
	// Source.Revision is the one of them commit statuses go to.
	Revisions []string
	// SourceError, when set, says the source's newest revision could not be
	// read or built; the proposal is otherwise the last good one.
	SourceError string
	// Authority is the identity the tool applies as (a service account);
	// every write the rollout makes for the proposal must be one it may
	// make. Nil when the tool applies as itself (Flux without lockdown,
	// plain Helm): then only the tool's ownership of the StatefulSet,
	// checked when it was proposed, stands for it.
	Authority *v1alpha1.Identity
	// Round is the read of the tool object that made the proposal
	// (Store.NextRound): the StatefulSets one read proposed share it, and
	// the tool is asked to apply again once for them, when each converged
	// or will not (source.Nudger). Zero for a proposal made on its own.
	Round uint64
}

// Key is the StatefulSet a proposal is for.
func (p *Proposal) Key() types.NamespacedName {
	return types.NamespacedName{Namespace: p.StatefulSet.Namespace, Name: p.StatefulSet.Name}
}

// Owner is the GitOps object that proposes StatefulSets.
type Owner struct {
	Kind, Namespace, Name string
}

// OwnerOf is the owner named by a source.
func OwnerOf(s v1alpha1.Source) Owner {
	return Owner{Kind: s.Kind, Namespace: s.Namespace, Name: s.Name}
}
