# increase-only: a claim's storage request only grows, except to recover
# from a failed expansion.
#
# Kubernetes rejects a PVC whose request drops below its current capacity, and
# claimwarden never lowers a request whatever the verdict, so a smaller
# template would leave the rollout stuck with a silently over-sized claim. The
# denial says so where the author of the template change will see it.
#
# The one smaller template claimwarden applies is a recovery
# (change.storage.recovery): the expansion to the claim's request failed and
# the template lies above the claim's capacity, so lowering the request
# gives back only storage the volume never had (KEP-1790). It is allowed
# unless parameter allow_recovery is false, or the API server refuses to
# lower a request (input.server.recoverFromFailedExpansion false: before
# 1.32, RecoverVolumeExpansionFailure is off by default).
package claimwarden.claims

deny contains {"policy": "increase-only", "msg": msg} if {
	[from, to] := _claim_sizes
	to < from
	not _recovery_allowed
	not "increase-only" in _disabled_ids
	msg := _increase_only_message(from, to)
}

# Only true allows: a malformed parameter refuses, as a policy that cannot
# tell what it was asked to allow must.
_recovery_allowed if {
	input.change.storage.recovery == true
	params.allow_recovery == true
	not input.server.recoverFromFailedExpansion == false
}

_increase_only_message(from, to) := msg if {
	input.change.storage.recovery == true
	params.allow_recovery == true
	msg := sprintf(
		"%s: the template requests %s, less than the claim's current %s, which would recover the claim from its failed expansion to %s (capacity %s); refused because this API server does not accept a lowered request (RecoverVolumeExpansionFailure is off; on by default from Kubernetes 1.32)",
		[claim_ref, _quantity_text("to", to), _quantity_text("from", from), _quantity_text("from", from), _capacity_text],
	)
} else := msg if {
	input.change.storage.recovery == true
	msg := sprintf(
		"%s: the template requests %s, less than the claim's current %s, which would recover the claim from its failed expansion to %s (capacity %s); refused because parameter allow_recovery (policies.params) is %s",
		[
			claim_ref, _quantity_text("to", to), _quantity_text("from", from), _quantity_text("from", from),
			_capacity_text, json.marshal(params.allow_recovery),
		],
	)
} else := sprintf(
	"%s: the template requests %s, less than the claim's current %s; a PVC's storage request can only grow",
	[claim_ref, _quantity_text("to", to), _quantity_text("from", from)],
)

_capacity_text := s if {
	s := input.change.storage.capacity
	is_string(s)
	s != ""
} else := format_bytes(n) if {
	n := input.change.storage.capacityBytes
	is_number(n)
} else := "not reported"
