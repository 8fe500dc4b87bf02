package outcome

import (
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// deniedPrefix starts the message of a claim a policy denied (plan.Build);
// statefulSetDeniedPrefix the problem the report phase lists when a policy
// denied the StatefulSet-level change (StatefulSetDenied).
const (
	deniedPrefix            = "denied by policy: "
	statefulSetDeniedPrefix = "StatefulSet change denied by policy: "
)

// StateOf is the state a rollout shows on its commit: success when every
// claim is compatible, failure when a policy denied or the proposer may not
// make the change (NotAuthorized), error when blocked
// otherwise (a rejected patch, a failed resize), pending while in progress.
// The message is the one a pull request author needs: for a denial, the
// denied StatefulSet-level change (StatefulSetDenied, found among the
// status's problems), else the first denied claim and its policy
// (ClaimDenied): what `claimwarden check` says of the same proposal.
func StateOf(vcr *v1alpha1.VolumeClaimRollout) (State, string) {
	ready := conditions.Get(vcr, meta.ReadyCondition)
	switch {
	case ready != nil && ready.Status == metav1.ConditionTrue:
		return Success, ready.Message
	case conditions.IsStalled(vcr):
		c := conditions.Get(vcr, meta.StalledCondition)
		switch c.Reason {
		case v1alpha1.ReasonPolicyDenied:
			return Failure, firstDenial(vcr, c.Message)
		case v1alpha1.ReasonNotAuthorized:
			// Decided, as a denial is: the proposer may not make the change.
			return Failure, c.Message
		}
		return Error, c.Message
	case ready != nil:
		return Pending, ready.Message
	}
	return Pending, "rollout started"
}

func firstDenial(vcr *v1alpha1.VolumeClaimRollout, fallback string) string {
	for _, p := range vcr.Status.Problems {
		if strings.HasPrefix(p, statefulSetDeniedPrefix) {
			return p
		}
	}
	for _, c := range vcr.Status.Claims {
		// A claim left alone for its immutable fields is Denied too, but not
		// by a policy: its message names no policy.
		if c.Phase == v1alpha1.ClaimDenied && strings.HasPrefix(c.Message, deniedPrefix) {
			return ClaimDenied(c.Name, ClaimDeniedText(c.Message))
		}
	}
	return fallback
}

// ClaimDenied words the denial of one claim, "<claim>: <policy>: <message>",
// as the commit status of the controller and of `claimwarden check` say it.
// When the denials name the claim already (the shipped policies' claim_ref,
// "claim <name> (StatefulSet …)"), the name is not said twice.
func ClaimDenied(claim, denials string) string {
	if strings.Contains(denials, "claim "+claim+" (") {
		return denials
	}
	return claim + ": " + denials
}

// ClaimDeniedText is the denial text of a claim's message as plan.Build
// writes it for a denied claim ("denied by policy: <denials>").
func ClaimDeniedText(message string) string { return strings.TrimPrefix(message, deniedPrefix) }

// StatefulSetDenied words the denial of the StatefulSet-level change (the
// re-create, templates added or removed): the report phase lists it among
// the rollout's problems, and StateOf and check's commit status say it.
func StatefulSetDenied(denials string) string {
	return statefulSetDeniedPrefix + denials
}

// Superseded words the state of a revision a newer one replaced before its
// rollout finished.
func Superseded(newer string) string {
	return "superseded by " + proposal.ShortRevision(newer) + " before its rollout finished"
}
