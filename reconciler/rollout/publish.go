package rollout

import (
	"context"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// publish hands the sinks the rollout's state after this reconcile.
func (r *Reconciler) publish(ctx context.Context, sts *appsv1.StatefulSet, src v1alpha1.Source, before, after *v1alpha1.VolumeClaimRollout) {
	r.sinks.Publish(ctx, outcomeOf(sts, src, before, after))
}

// outcomeOf is the Reconciled outcome of a rollout towards src whose status
// went from before to after.
func outcomeOf(sts *appsv1.StatefulSet, src v1alpha1.Source, before, after *v1alpha1.VolumeClaimRollout) outcome.Outcome {
	state, msg := outcome.StateOf(after)
	o := outcome.Outcome{
		Action:      outcome.Reconciled,
		StatefulSet: types.NamespacedName{Namespace: sts.Namespace, Name: sts.Name},
		UID:         sts.UID,
		Source:      src,
		Labels:      sts.Labels,
		State:       state,
		Reason:      conditions.GetReason(after, meta.ReadyCondition),
		Message:     msg,
		Recorded:    after.Status.LastCommitStatus,
		Previous:    previousOf(before),
	}
	return o
}

// previousOf is the state a rollout recorded, when it recorded one.
func previousOf(vcr *v1alpha1.VolumeClaimRollout) *outcome.Previous {
	p := vcr.Status.Proposal
	if p == nil || conditions.Get(vcr, meta.ReadyCondition) == nil {
		return nil
	}
	state, msg := outcome.StateOf(vcr)
	return &outcome.Previous{Source: recordedSource(p.Source), State: state, Message: msg}
}
