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
