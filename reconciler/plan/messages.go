package plan

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// maxNames bounds the claim names listed in Blocked, which ends up in
// conditions and commit statuses of bounded length.
const maxNames = 3

func compatibleMessage(c diff.ClaimChange) string {
	msg := "compatible"
	if c.OverSized {
		msg += fmt.Sprintf("; over-sized: requests %s, template %s (never shrunk)", c.RequestFrom.String(), c.TemplateRequest.String())
	}
	for _, note := range []string{recoveredNote(c), unsupportedNote(c)} {
		if note != "" {
			msg += "; " + note
		}
	}
	// A failure on a compatible claim is not the rollout's, but it is not hidden.
	if f := failure(c); f != "" {
		msg += "; " + f
	}
	return msg
}

func missingMessage(templateAdded bool) string {
	if templateAdded {
		return "PVC not created yet; its template was added, which is reported, not acted on"
	}
	return "PVC not created yet; the StatefulSet controller creates it from the template"
}

// deniedMessage names each immutable field with both values.
func deniedMessage(c diff.ClaimChange) string {
	parts := make([]string, 0, len(c.Immutable)+1)
	for _, m := range c.Immutable {
		parts = append(parts, fmt.Sprintf("%s: PVC %s, template %s", m.Field, m.Live, m.Desired))
	}
	if f := failure(c); f != "" {
		parts = append(parts, f)
	}
	return "immutable fields differ, claim left as it is: " + strings.Join(parts, "; ")
}

// failure is the claim's expansion or VAC failure, empty when none.
func failure(c diff.ClaimChange) string {
	var parts []string
	if c.ResizeError != "" {
		parts = append(parts, "resize failed: "+c.ResizeError)
	}
	if c.ModifyError != "" {
		parts = append(parts, "volume attributes class change failed: "+c.ModifyError)
	}
	return strings.Join(parts, "; ")
}

// restartMessage says that the claim waits for its Pod: the storage
// expanded the volume, the node grows the file system once it is mounted again.
func restartMessage(c diff.ClaimChange) string {
	return fmt.Sprintf("waiting for its Pod (ordinal %d) to restart: the volume is expanded to %s, and its file system grows when the volume is mounted again (FileSystemResizePending)",
		c.Ordinal, c.RequestTo.String())
}

func waitingMessage(inFlight, maxInFlight int, c diff.ClaimChange) string {
	return fmt.Sprintf("waiting for its turn (%d in flight, at most %d); will patch %s", inFlight, maxInFlight, patchSummary(c))
}

// patchSummary says what a patch of c changes.
func patchSummary(c diff.ClaimChange) string {
	var parts []string
	if c.ToBytes != c.FromBytes {
		storage := "storage " + c.RequestFrom.String() + " → " + c.RequestTo.String()
		if c.Recovery {
			storage += " to recover from the failed expansion to " + c.RequestFrom.String()
		}
		parts = append(parts, storage)
	}
	if !samePtr(c.VACFrom, c.VACTo) {
		parts = append(parts, "volume attributes class "+renderVAC(c.VACFrom)+" → "+renderVAC(c.VACTo))
	}
	if len(c.Labels) > 0 {
		parts = append(parts, "labels "+keys(c.Labels))
	}
	if len(c.Annotations) > 0 {
		parts = append(parts, "annotations "+keys(c.Annotations))
	}
	return strings.Join(parts, ", ")
}

// blocked explains, for people, what keeps the rollout from finishing.
func blocked(strategy v1alpha1.UpdateStrategy, failed, denied, policyDenied, added, removed []string) string {
	var parts []string
	if strategy != v1alpha1.InPlace && strategy != v1alpha1.OnClaimDelete {
		parts = append(parts, fmt.Sprintf("unknown update strategy %q: nothing is patched", strategy))
	}
	if len(failed) > 0 {
		parts = append(parts, "failed claims stop new patches: "+nameList(failed))
	}
	if len(policyDenied) > 0 {
		parts = append(parts, "denied by policy: "+nameList(policyDenied))
	}
	if len(denied) > 0 {
		parts = append(parts, "immutable fields differ on "+nameList(denied))
	}
	if len(added) > 0 {
		parts = append(parts, "templates added (reported, not acted on): "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "templates removed (reported, not acted on): "+strings.Join(removed, ", "))
	}
	return strings.Join(parts, "; ")
}

// groupedNames groups the steps' claim names by key (steps whose key is ""
// left out), in the order keys first appear, and joins format(key,
// nameList) of each group with "; "; "" when no step has a key.
func groupedNames(steps []Step, key func(Step) string, format func(key, names string) string) string {
	var keys []string
	byKey := map[string][]string{}
	for _, s := range steps {
		k := key(s)
		if k == "" {
			continue
		}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], s.Claim.Name)
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = format(k, nameList(byKey[k]))
	}
	return strings.Join(parts, "; ")
}

// nameList lists up to maxNames names and counts the rest.
func nameList(names []string) string {
	if len(names) <= maxNames {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxNames], ", ") + " and " + strconv.Itoa(len(names)-maxNames) + " more"
}

func renderVAC(p *string) string {
	if p == nil {
		return "(unset)"
	}
	return strconv.Quote(*p)
}

func samePtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func keys(m map[string]string) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
