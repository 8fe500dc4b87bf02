package claimwarden.claims

test_increase_only_denies_a_smaller_template if {
	denials("increase-only") == {"claim data-web-0 (StatefulSet shop/web): the template requests 10Gi, less than the claim's current 20Gi; a PVC's storage request can only grow"} with input as mock_claim(20, 10)
}

test_increase_only_allows_growth if {
	count(denials("increase-only")) == 0 with input as mock_claim(10, 11)
}

# Equal sizes are claim changes too (e.g. only labels differ).
test_increase_only_allows_an_unchanged_size if {
	count(deny) == 0 with input as mock_claim(10, 10)
}

test_increase_only_compares_bytes_not_text if {
	# 10G (decimal) is less than 10Gi although "10G" < "10Gi" says nothing.
	denials("increase-only") == {"claim data-web-0 (StatefulSet shop/web): the template requests 10G, less than the claim's current 10Gi; a PVC's storage request can only grow"} with input as mock_claim_bytes("10Gi", 10 * gib, "10G", 10000000000)

	# 1Ti is more than 900Gi although "1Ti" sorts before "900Gi".
	count(denials("increase-only")) == 0 with input as mock_claim_bytes("900Gi", 900 * gib, "1Ti", 1024 * gib)
}

test_increase_only_can_be_disabled if {
	count(denials("increase-only")) == 0 with input as mock_claim(20, 10)
		with data.claimwarden.params as {"disabled": ["increase-only"]}

	# Disabling another policy leaves this one on.
	count(denials("increase-only")) == 1 with input as mock_claim(20, 10)
		with data.claimwarden.params as {"disabled": ["max-step"]}
}

test_increase_only_ignores_statefulset_changes if {
	shrinking := json.patch(mock_claim(20, 10), [{"op": "replace", "path": "/change/kind", "value": "statefulset"}])
	count(denials("increase-only")) == 0 with input as shrinking
}

test_increase_only_denies_without_pvc_or_storage_class if {
	shrinking := object.union(mock_claim(20, 10), {"pvc": null, "storageClass": null})
	count(denials("increase-only")) == 1 with input as shrinking
}

# mock_recovery is a claim whose expansion to 10Gi failed on a 1Gi volume
# and whose template asks for 2Gi.
mock_recovery := json.patch(mock_claim(10, 2), [
	{"op": "add", "path": "/change/storage/recovery", "value": true},
	{"op": "add", "path": "/change/storage/capacity", "value": "1Gi"},
	{"op": "add", "path": "/change/storage/capacityBytes", "value": gib},
])

test_increase_only_allows_a_recovery_by_default if {
	count(denials("increase-only")) == 0 with input as mock_recovery
}

test_increase_only_refuses_a_recovery_when_told if {
	denials("increase-only") == {"claim data-web-0 (StatefulSet shop/web): the template requests 2Gi, less than the claim's current 10Gi, which would recover the claim from its failed expansion to 10Gi (capacity 1Gi); refused because parameter allow_recovery (policies.params) is false"} with input as mock_recovery
		with data.claimwarden.params as {"allow_recovery": false}
}

test_increase_only_refuses_a_recovery_on_a_malformed_parameter if {
	denials("increase-only") == {"claim data-web-0 (StatefulSet shop/web): the template requests 2Gi, less than the claim's current 10Gi, which would recover the claim from its failed expansion to 10Gi (capacity 1Gi); refused because parameter allow_recovery (policies.params) is \"yes\""} with input as mock_recovery
		with data.claimwarden.params as {"allow_recovery": "yes"}
}

# A server that refused a lowered request (in a dry run) refuses the
# recovery whatever the parameter; one not known to refuse allows it.
test_increase_only_refuses_a_recovery_the_server_refuses if {
	refused := object.union(mock_recovery, {"server": {"recoverFromFailedExpansion": false}})
	denials("increase-only") == {"claim data-web-0 (StatefulSet shop/web): the template requests 2Gi, less than the claim's current 10Gi, which would recover the claim from its failed expansion to 10Gi (capacity 1Gi); refused because this API server does not accept a lowered request (RecoverVolumeExpansionFailure is off; on by default from Kubernetes 1.32)"} with input as refused

	accepted := object.union(mock_recovery, {"server": {"recoverFromFailedExpansion": true}})
	count(denials("increase-only")) == 0 with input as accepted
}

# allow_recovery allows recoveries only: a shrink stays denied.
test_increase_only_allow_recovery_allows_no_shrink if {
	count(denials("increase-only")) == 1 with input as mock_claim(10, 2)
		with data.claimwarden.params as {"allow_recovery": true}

	not_flagged := json.patch(mock_recovery, [{"op": "replace", "path": "/change/storage/recovery", "value": false}])
	denials("increase-only") == {"claim data-web-0 (StatefulSet shop/web): the template requests 2Gi, less than the claim's current 10Gi; a PVC's storage request can only grow"} with input as not_flagged
}

test_increase_only_names_the_capacity_from_its_bytes if {
	bytes_only := json.patch(mock_recovery, [{"op": "remove", "path": "/change/storage/capacity"}])
	some msg in denials("increase-only") with input as bytes_only with data.claimwarden.params as {"allow_recovery": false}
	contains(msg, "(capacity 1Gi)")
}

test_increase_only_names_an_unreported_capacity if {
	no_capacity := json.patch(mock_recovery, [{"op": "remove", "path": "/change/storage/capacity"}, {"op": "remove", "path": "/change/storage/capacityBytes"}])
	some msg in denials("increase-only") with input as no_capacity with data.claimwarden.params as {"allow_recovery": false}
	contains(msg, "(capacity not reported)")
}
