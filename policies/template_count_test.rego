package claimwarden.claims

test_template_count_denies_added_templates if {
	denials("template-count") == {"StatefulSet shop/web: volumeClaimTemplates added (cache, logs); adding or removing templates is a migration, not a rollout"} with input as mock_statefulset(["logs", "cache"], [])
}

test_template_count_denies_removed_templates if {
	denials("template-count") == {"StatefulSet shop/web: volumeClaimTemplates removed (data); adding or removing templates is a migration, not a rollout"} with input as mock_statefulset([], ["data"])
}

test_template_count_denies_both_directions_separately if {
	count(denials("template-count")) == 2 with input as mock_statefulset(["logs"], ["data"])
}

# The Go side omits empty lists (omitempty) and may send null.
test_template_count_allows_no_change if {
	count(deny) == 0 with input as mock_statefulset([], [])
	count(deny) == 0 with input as mock_statefulset(null, null)
	count(deny) == 0 with input as {"change": {"kind": "statefulset", "namespace": "shop", "statefulSet": "web"}}
}

test_template_count_can_be_disabled if {
	count(denials("template-count")) == 0 with input as mock_statefulset(["logs"], ["data"])
		with data.claimwarden.params as {"disabled": ["template-count"]}
}

test_template_count_ignores_claim_changes if {
	claim := object.union(mock_claim(10, 10), {"change": {"templatesAdded": ["logs"]}})
	count(denials("template-count")) == 0 with input as claim
}
