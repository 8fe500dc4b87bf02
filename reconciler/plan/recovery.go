package plan

import (
	"fmt"
	"strings"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// blockingFailure is the failure that makes c Failed and stops new
// patches. A failed expansion does not when the template lowers the
// request to recover from it (diff's Recovery), nor once the request was
// lowered (Recovering): the failure is then the abandoned larger
// expansion's. A failed VolumeAttributesClass change still blocks.
func blockingFailure(c diff.ClaimChange) string {
	if c.Recovery || c.Recovering {
		if c.ModifyError == "" {
			return ""
		}
		return "volume attributes class change failed: " + c.ModifyError
	}
	return failure(c)
}

// recoveringMessage is the message of a claim whose request was lowered
// after a failed expansion and whose storage has yet to reach it.
func recoveringMessage(c diff.ClaimChange) string {
	msg := "recovering from failed expansion"
	if c.RecoveredFrom != "" {
		msg += " to " + c.RecoveredFrom
	}
	msg += ": request lowered to " + c.RequestFrom.String() + "; waiting for storage: " + strings.Join(c.Reasons, "; ")
	return msg
}

// recoveredNote says of a compatible claim that a recovery brought it to
// its size, "" when none did: the storage keeps no trace of the failure
// once it reached the lower size, the claim's annotation does.
func recoveredNote(c diff.ClaimChange) string {
	if c.RecoveredFrom == "" || c.OverSized {
		return ""
	}
	return fmt.Sprintf("recovered from failed expansion to %s (the expansion to %s had failed)", c.RequestFrom.String(), c.RecoveredFrom)
}

// recoveredSummary names the compatible claims a recovery brought to
// their size, by size, for the rollout's Ready condition and so its commit
// status and completion event: "recovered from failed expansion to 2Gi:
// data-web-1, data-web-2; to 5Gi: logs-web-2"; "" when none.
func recoveredSummary(steps []Step) string {
	groups := groupedNames(steps, func(s Step) string {
		if !s.Claim.Compatible || recoveredNote(s.Claim) == "" {
			return ""
		}
		return s.Claim.RequestFrom.String()
	}, func(size, names string) string { return "to " + size + ": " + names })
	if groups == "" {
		return ""
	}
	return "recovered from failed expansion " + groups
}
