# increase-only: a claim's storage request only grows.
#
# Kubernetes rejects a PVC whose request drops below its current capacity, and
# claimwarden never lowers a request whatever the verdict, so a smaller
# template would leave the rollout stuck with a silently over-sized claim. The
# denial says so where the author of the template change will see it.
package claimwarden.claims

deny contains {"policy": "increase-only", "msg": msg} if {
	[from, to] := _claim_sizes
	to < from
	not "increase-only" in _disabled_ids
	msg := sprintf(
		"%s: the template requests %s, less than the claim's current %s; a PVC's storage request can only grow",
		[claim_ref, _quantity_text("to", to), _quantity_text("from", from)],
	)
}
