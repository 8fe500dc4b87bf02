package rollout

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/authority"
)

// stepWrites are the writes this step of the rollout makes: a patch per
// claim planned now; when the StatefulSet converges, the orphan delete and
// re-create and a patch of every claim the proposal will change, since
// the re-create cannot be undone and must not leave claims it cannot
// patch behind.
func stepWrites(sts *appsv1.StatefulSet, t target, a assess.Assessment) []authority.Write {
	var writes []authority.Write
	claims := a.Plan.Patch
	if t.recreateWith != nil && !a.Verdict.Denied() {
		writes = append(writes, authority.DeleteStatefulSet(sts.Namespace, sts.Name), authority.CreateStatefulSet(sts.Namespace, sts.Name))
		claims = nil
		for _, s := range a.Plan.Steps {
			if !s.Claim.Missing && (s.Phase == v1alpha1.ClaimPending || s.Phase == v1alpha1.ClaimPatching) {
				claims = append(claims, s.Claim)
			}
		}
	}
	for _, c := range claims {
		writes = append(writes, authority.PatchClaim(sts.Namespace, c.Name))
	}
	return writes
}

// authorize checks, before the first write of the step, that the target's
// authority may make every one of writes. Nil when it may (or the target
// has none: the tool applies as itself, or the StatefulSet is its own
// source); a *authority.Refusal when it may not; another error when it
// could not be asked, and then nothing is written either.
func (r *Reconciler) authorize(ctx context.Context, id *v1alpha1.Identity, writes []authority.Write) error {
	if id == nil || len(writes) == 0 {
		return nil
	}
	if r.opts.Authority == nil {
		return &authority.Refusal{Identity: *id, Write: writes[0], Reason: "no authority checker is configured"}
	}
	return r.opts.Authority.Check(ctx, *id, writes)
}

// notAuthorized reports a step its authority may not make: the rollout is
// Stalled naming the identity, the verb and the object (the event sink
// says it once as an event), and it is asked again after
// Options.AuthorityRecheck: a role granted meanwhile makes no event.
func (r *Reconciler) notAuthorized(ctx context.Context, sts *appsv1.StatefulSet, before, vcr *v1alpha1.VolumeClaimRollout, src v1alpha1.Source, err error) (ctrl.Result, error) {
	refusal, ok := errors.AsType[*authority.Refusal](err)
	if !ok {
		return ctrl.Result{}, fmt.Errorf("authorising the rollout of StatefulSet %s/%s: %w", sts.Namespace, sts.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("the proposal's authority may not make this step's writes", "identity", refusal.Identity.User, "write", refusal.Write.String())
	r.stall(ctx, sts, before, vcr, src, v1alpha1.ReasonNotAuthorized, "not authorised: "+refusal.Error())
	return ctrl.Result{RequeueAfter: r.opts.AuthorityRecheck}, nil
}
