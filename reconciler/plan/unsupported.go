package plan

import (
	"fmt"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// vacUnsupportedWhy says why a template's VolumeAttributesClass is not
// applied where the API server serves none.
const vacUnsupportedWhy = "this API server serves no VolumeAttributesClasses (GA in Kubernetes 1.34; beta and off by default in 1.31–1.33), so it would drop the class from a patch"

// unsupportedNote says of a claim that the template's class is not applied
// to it, "" when it is not so.
func unsupportedNote(c diff.ClaimChange) string {
	if c.VACUnsupported == nil {
		return ""
	}
	return fmt.Sprintf("volume attributes class %s not applied: %s", *c.VACUnsupported, vacUnsupportedWhy)
}

// unsupportedSummary names, by class, the claims whose template's class is
// not applied: "volume attributes class gold not applied to data-web-0,
// data-web-1 (this API server serves no …)"; "" when none.
func unsupportedSummary(steps []Step) string {
	groups := groupedNames(steps, func(s Step) string {
		if s.Claim.VACUnsupported == nil {
			return ""
		}
		return *s.Claim.VACUnsupported
	}, func(class, names string) string { return class + " not applied to " + names })
	if groups == "" {
		return ""
	}
	return "volume attributes class " + groups + " (" + vacUnsupportedWhy + ")"
}
