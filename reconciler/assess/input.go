package assess

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// Input is one proposal and the state it is assessed against. Build it
// with NewInput: the rollout, `claimwarden check` and autoresize each ask
// about proposals, and what follows from the proposal itself is derived in
// one place so that the three cannot drift.
type Input struct {
	// Live is the live StatefulSet: its partition and ordinals hold claims back.
	Live *appsv1.StatefulSet
	// Desired is Live with the proposal's templates (plan.WithTemplates),
	// or Live itself when it carries them already.
	Desired *appsv1.StatefulSet
	// Recreate says that Live must be re-created to carry Desired's
	// templates: the StatefulSet-level question is asked, and no claim is
	// patched before the re-create.
	Recreate bool
	// Claims are the claims named after the StatefulSet.
	Claims []corev1.PersistentVolumeClaim
	// IgnoredLabels are template label keys never copied onto claims.
	IgnoredLabels []string
	// Strategy is Live's update strategy (its annotation, else the
	// asker's default).
	Strategy v1alpha1.UpdateStrategy

	Settings
	Cluster
}

// Settings are an asker's own: the controller's configuration, check's
// flags.
type Settings struct {
	// MaxClaims bounds templates × replicas (diff.Input.MaxClaims).
	MaxClaims int
	// MaxConcurrent and OnDelete tune the plan (plan.Options);
	// DefaultStrategy is the strategy of a StatefulSet without the
	// annotation.
	MaxConcurrent   int
	DefaultStrategy v1alpha1.UpdateStrategy
	// LookAhead also compares the claims outside Desired's ordinals, each
	// as the controller will once the replicas reach it: check warns of
	// them before the scale-up does.
	LookAhead bool
}

// Cluster is what the asker read of the cluster for the proposal.
type Cluster struct {
	// Facts are the cluster's facts the policies read. Also are further
	// sets of facts — the objects a pull request proposes besides its
	// StatefulSets — whose denials add to those of Facts and never lift one.
	Facts gate.Facts
	Also  []gate.Facts
	// InFlight is what other proposals of the namespace still have to
	// grow, by quota resource (see Growth): the quota is theirs too.
	InFlight Growth
	// Server is what the API server supports, as far as known: a
	// VolumeAttributesClass it cannot apply is reported and not waited
	// for, and every question carries it (input.server).
	Server policies.Server
	// OnDelete says which Pods of an OnDelete StatefulSet are old.
	OnDelete plan.OnDelete
}

// NewInput is the Input of desired's templates proposed over live, with
// its claims: it re-creates live exactly when the templates differ (no
// asker decides that for itself), under the strategy live's annotation
// sets. The error is the annotation's.
func NewInput(live, desired *appsv1.StatefulSet, claims []corev1.PersistentVolumeClaim, ignoredLabels []string, s Settings, c Cluster) (Input, error) {
	strategy, err := plan.StrategyOf(live, s.DefaultStrategy)
	if err != nil {
		return Input{}, err
	}
	return Input{
		Live: live, Desired: desired, Claims: claims, IgnoredLabels: ignoredLabels, Strategy: strategy,
		Recreate: !diff.TemplatesEqual(live.Spec.VolumeClaimTemplates, desired.Spec.VolumeClaimTemplates),
		Settings: s, Cluster: c,
	}, nil
}
