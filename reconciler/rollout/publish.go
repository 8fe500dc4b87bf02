package rollout

import (
	"context"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// publish hands the sinks the rollout's state after this reconcile, and
// the policies' denials when it asked them (a: nil when it did not).
func (r *Reconciler) publish(ctx context.Context, sts *appsv1.StatefulSet, src v1alpha1.Source, before, after *v1alpha1.VolumeClaimRollout, a *assess.Assessment) {
	o := outcomeOf(sts, src, before, after)
	if a != nil {
		o.Denials = denialsOf(a.Answers)
	}
	r.sinks.Publish(ctx, o)
}

// denialsOf are the denials among the answers, each policy and message
// once, in the order asked.
func denialsOf(answers gate.Result) []outcome.Denial {
	var out []outcome.Denial
	seen := map[outcome.Denial]bool{}
	add := func(a gate.Answer) {
		for _, r := range a.Verdict.Denials {
			if d := (outcome.Denial{Policy: r.Policy, Message: r.Message}); !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	for _, a := range answers.Claims {
		add(a)
	}
	if answers.StatefulSet != nil {
		add(*answers.StatefulSet)
	}
	return out
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
