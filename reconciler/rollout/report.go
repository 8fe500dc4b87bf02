package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// report writes the rollout's status: the proposal worked towards, claims,
// counts, problems, conditions.
func (r *Reconciler) report(vcr *v1alpha1.VolumeClaimRollout, t target, strategy v1alpha1.UpdateStrategy, a assess.Assessment, out patchOutcome, rs restartOutcome) {
	st := &vcr.Status
	st.ObservedGeneration = t.sts.Generation
	st.Strategy = strategy
	st.Proposal = &v1alpha1.Proposal{Source: t.src, TemplatesHash: templatesHash(t.sts), IgnoredLabels: t.ignoredLabels, Authority: t.authority}
	st.Claims, st.Counts = claimStatuses(a.Plan, out)
	st.Progress = fmt.Sprintf("%d/%d", st.Counts.Compatible, st.Counts.Total)
	st.Problems = problems(a.Diff, a.Plan, a.Verdict)
	setConditions(vcr, strategy, a.Diff, a.Plan, a.Verdict, out, rs)
	r.setPoliciesCondition(vcr)
}

// stall reports a StatefulSet the controller cannot act on until it
// changes; what its proposal would grow is no longer reserved.
func (r *Reconciler) stall(ctx context.Context, sts *appsv1.StatefulSet, before, vcr *v1alpha1.VolumeClaimRollout, src v1alpha1.Source, reason, msg string) {
	r.reserved.drop(client.ObjectKeyFromObject(sts))
	vcr.Status.ObservedGeneration = sts.Generation
	markStalled(vcr, reason, msg)
	r.publish(ctx, sts, src, before, vcr, nil)
}

// claimStatuses turns the plan (planned on the claims as the patches left
// them, see afterPatches) and a rejected patch into per-claim status and counts.
func claimStatuses(p plan.Plan, out patchOutcome) ([]v1alpha1.ClaimStatus, v1alpha1.Counts) {
	claims := make([]v1alpha1.ClaimStatus, 0, len(p.Steps))
	var n v1alpha1.Counts
	capacity := resource.Quantity{}
	for _, s := range p.Steps {
		c := s.Claim
		cs := v1alpha1.ClaimStatus{
			Name: c.Name, Template: c.Template, Ordinal: c.Ordinal,
			To: c.RequestTo.String(), Phase: s.Phase, OverSized: c.OverSized, Message: s.Message,
		}
		if !c.Missing {
			cs.From = c.RequestFrom.String()
			capacity.Add(c.Capacity)
		}
		if out.rejected != nil && out.rejected.claim == c.Name {
			cs.Phase, cs.Message = v1alpha1.ClaimFailed, out.rejected.message
		}
		n.Total++
		switch cs.Phase {
		case v1alpha1.ClaimCompatible:
			n.Compatible++
		case v1alpha1.ClaimPatching, v1alpha1.ClaimResizing:
			n.Updating++
		case v1alpha1.ClaimWaitingForRestart:
			n.WaitingForRestart++
		case v1alpha1.ClaimDenied:
			n.Denied++
		case v1alpha1.ClaimFailed:
			n.Failed++
		}
		if c.OverSized {
			n.OverSized++
		}
		claims = append(claims, cs)
	}
	n.Capacity = capacity.String()
	return claims, n
}

// problems lists what the controller reports but does not act on.
func problems(res diff.Result, p plan.Plan, g assess.Verdict) []string {
	var out []string
	for _, s := range p.Steps {
		if s.Phase == v1alpha1.ClaimDenied {
			out = append(out, s.Message)
		}
	}
	if g.StatefulSet != "" {
		out = append(out, outcome.StatefulSetDenied(g.StatefulSet))
	}
	if len(res.TemplatesAdded) > 0 {
		out = append(out, "templates added (not acted on): "+strings.Join(res.TemplatesAdded, ", "))
	}
	if len(res.TemplatesRemoved) > 0 {
		out = append(out, "templates removed (not acted on): "+strings.Join(res.TemplatesRemoved, ", "))
	}
	return out
}

// setConditions sets kstatus conditions: Ready when every claim is
// compatible; Reconciling while claims change; Stalled when nothing can
// progress without a person (a rejected patch, a failed resize or
// VolumeAttributesClass change, a field no patch can change, templates added
// or removed).
func setConditions(vcr *v1alpha1.VolumeClaimRollout, strategy v1alpha1.UpdateStrategy, res diff.Result, p plan.Plan, g assess.Verdict, out patchOutcome, rs restartOutcome) {
	n := vcr.Status.Counts
	progressing := n.Updating > 0 || len(out.patched) > 0
	switch {
	case out.rejected != nil:
		markStalled(vcr, v1alpha1.ReasonPatchRejected, out.rejected.message)
	case g.Denied() && !progressing:
		markStalled(vcr, v1alpha1.ReasonPolicyDenied, blockedMessage(p))
	case p.Done && !g.Denied():
		msg := fmt.Sprintf("%d/%d claims compatible", n.Compatible, n.Total)
		if n.OverSized > 0 {
			msg += fmt.Sprintf(" (%d over-sized, left as they are)", n.OverSized)
		}
		// Also the completion event's and the commit status's words.
		for _, summary := range []string{p.Recovered, p.Unsupported} {
			if summary != "" {
				msg += "; " + summary
			}
		}
		conditions.MarkTrue(vcr, meta.ReadyCondition, v1alpha1.ReasonCompatible, "%s", msg)
		conditions.Delete(vcr, meta.ReconcilingCondition)
		conditions.Delete(vcr, meta.StalledCondition)
	case p.Blocked != "" && !progressing:
		markStalled(vcr, blockedReason(res), blockedMessage(p))
	case rs.summary != "" && !progressing && rs.active:
		msg := fmt.Sprintf("%d/%d claims compatible; %s", n.Compatible, n.Total, rs.summary)
		conditions.MarkReconciling(vcr, v1alpha1.ReasonWaitingForRestart, "%s", msg)
		conditions.MarkUnknown(vcr, meta.ReadyCondition, v1alpha1.ReasonWaitingForRestart, "%s", msg)
		conditions.Delete(vcr, meta.StalledCondition)
	case rs.summary != "" && !progressing:
		// The storage did its part; a Pod restart, which claimwarden does
		// not make (not enabled, or refused), finishes it: a state to
		// alert on, yet neither in progress nor stalled.
		msg := fmt.Sprintf("%d/%d claims compatible; %s", n.Compatible, n.Total, rs.summary)
		conditions.MarkFalse(vcr, meta.ReadyCondition, v1alpha1.ReasonWaitingForRestart, "%s", msg)
		conditions.Delete(vcr, meta.ReconcilingCondition)
		conditions.Delete(vcr, meta.StalledCondition)
	case p.Held != "" && !progressing:
		// Waiting on purpose, as the StatefulSet's partition says: neither
		// in progress nor stalled.
		msg := fmt.Sprintf("%d/%d claims compatible; %s", n.Compatible, n.Total, p.Held)
		conditions.MarkFalse(vcr, meta.ReadyCondition, v1alpha1.ReasonPartitioned, "%s", msg)
		conditions.Delete(vcr, meta.ReconcilingCondition)
		conditions.Delete(vcr, meta.StalledCondition)
	case p.WaitingForPods != "" && !progressing:
		// Waiting on purpose, for a person to delete the Pods (OnDelete).
		msg := fmt.Sprintf("%d/%d claims compatible; %s", n.Compatible, n.Total, p.WaitingForPods)
		conditions.MarkFalse(vcr, meta.ReadyCondition, v1alpha1.ReasonWaitingForPods, "%s", msg)
		conditions.Delete(vcr, meta.ReconcilingCondition)
		conditions.Delete(vcr, meta.StalledCondition)
	case strategy == v1alpha1.OnClaimDelete && !progressing:
		msg := fmt.Sprintf("%d/%d claims compatible; %s keeps existing claims until they are deleted", n.Compatible, n.Total, v1alpha1.OnClaimDelete)
		conditions.MarkFalse(vcr, meta.ReadyCondition, v1alpha1.ReasonWaitingForClaims, "%s", msg)
		conditions.Delete(vcr, meta.ReconcilingCondition)
		conditions.Delete(vcr, meta.StalledCondition)
	default:
		msg := fmt.Sprintf("%d/%d claims compatible, %d updating", n.Compatible, n.Total, n.Updating)
		for _, why := range []string{p.Blocked, p.Held, p.WaitingForPods, rs.summary} {
			if why != "" {
				msg += "; " + why
			}
		}
		conditions.MarkReconciling(vcr, v1alpha1.ReasonProgressing, "%s", msg)
		conditions.MarkUnknown(vcr, meta.ReadyCondition, v1alpha1.ReasonProgressing, "%s", msg)
		conditions.Delete(vcr, meta.StalledCondition)
	}
}

func markStalled(vcr *v1alpha1.VolumeClaimRollout, reason, msg string) {
	conditions.MarkStalled(vcr, reason, "%s", msg)
	conditions.MarkFalse(vcr, meta.ReadyCondition, reason, "%s", msg)
	conditions.Delete(vcr, meta.ReconcilingCondition)
}

// blockedMessage is the first blocked claim's own words — its denial as
// the commit status says it, or its failure, which names the field and
// both values or the storage's error — then the plan's summary when it has
// more to say than that one claim: each said once.
func blockedMessage(p plan.Plan) string {
	var first *plan.Step
	blocked := 0
	for i := range p.Steps {
		if s := &p.Steps[i]; s.Phase == v1alpha1.ClaimFailed || s.Phase == v1alpha1.ClaimDenied {
			if first == nil {
				first = s
			}
			blocked++
		}
	}
	if first == nil {
		return p.Blocked
	}
	detail := first.Claim.Name + ": " + first.Message
	if first.Phase == v1alpha1.ClaimDenied {
		detail = outcome.ClaimDenied(first.Claim.Name, outcome.ClaimDeniedText(first.Message))
	}
	if blocked == 1 && !strings.Contains(p.Blocked, "; ") {
		return detail
	}
	return detail + "; " + p.Blocked
}

// blockedReason names the cause of a blocked plan, most urgent first.
func blockedReason(res diff.Result) string {
	// A claim whose immutable fields differ is denied (assess.ImmutablePolicy).
	for _, c := range res.Claims {
		// A recovery's failure is the abandoned expansion's: it blocks nothing.
		if c.ResizeError != "" && !c.Recovery && !c.Recovering {
			return v1alpha1.ReasonResizeFailed
		}
		if c.ModifyError != "" {
			return v1alpha1.ReasonModifyFailed
		}
	}
	return v1alpha1.ReasonTemplatesChanged
}

// templatesHash identifies the desired templates, as the API server stores
// them: the templates are normalised (diff.NormalTemplates) before hashing,
// so a proposal recorded before its re-create and the StatefulSet the server
// created and defaulted from it hash alike, and a controller that takes over
// (a restart, a new leader) ties the live StatefulSet to its commit.
// encoding/json sorts map keys and writes quantities canonically, so the
// hash is stable.
func templatesHash(sts *appsv1.StatefulSet) string {
	return hashOf(diff.NormalTemplates(sts.Spec.VolumeClaimTemplates))
}

// legacyTemplatesHash is the hash of the templates as they are, which
// releases before normalised hashing recorded: a rollout such a release
// recorded still matches its StatefulSet after an upgrade.
func legacyTemplatesHash(sts *appsv1.StatefulSet) string {
	return hashOf(sts.Spec.VolumeClaimTemplates)
}

func hashOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// policyStatus is implemented by evaluators that report their health (the
// policies.Engine does).
type policyStatus interface{ Status() policies.Status }

// setPoliciesCondition reports the health of the policy set on the rollout,
// so a stale bundle or a broken policy shows where the denials show.
func (r *Reconciler) setPoliciesCondition(vcr *v1alpha1.VolumeClaimRollout) {
	ps, ok := r.opts.Policies.(policyStatus)
	if !ok {
		return
	}
	switch s := ps.Status(); {
	case !s.Ready:
		conditions.MarkFalse(vcr, v1alpha1.PoliciesReadyCondition, v1alpha1.ReasonPoliciesBroken, "%s", s.Message)
	case s.Stale:
		conditions.MarkFalse(vcr, v1alpha1.PoliciesReadyCondition, v1alpha1.ReasonPoliciesStale, "%s", s.Message)
	default:
		conditions.MarkTrue(vcr, v1alpha1.PoliciesReadyCondition, v1alpha1.ReasonPoliciesLoaded, "policy revision %s", s.Revision)
	}
}
