package claimwarden.claims

# mock_quota(resource, used, hard) is a quota named "storage" limiting one
# resource, used and hard in Gi.
mock_quota(resource, used, hard) := {"name": "storage", "resources": {resource: {
	"hard": sprintf("%dGi", [hard]), "used": sprintf("%dGi", [used]),
	"hardValue": hard * gib, "usedValue": used * gib,
}}}

mock_claim_in_quotas(from, to, quotas) := object.union(mock_claim(from, to), {"resourceQuotas": quotas})

test_quota_fits_denies_an_increase_past_requests_storage if {
	claim := mock_claim_in_quotas(10, 20, [mock_quota("requests.storage", 15, 20)])
	denials("quota-fits") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 20Gi needs 10Gi more requests.storage, and ResourceQuota storage has 15Gi used of 20Gi: 5Gi over"} with input as claim
}

# The used value includes the claim's current request: only the increase counts.
test_quota_fits_allows_an_increase_that_fits_exactly if {
	count(denials("quota-fits")) == 0 with input as mock_claim_in_quotas(10, 20, [mock_quota("requests.storage", 10, 20)])
	count(denials("quota-fits")) == 1 with input as mock_claim_in_quotas(10, 21, [mock_quota("requests.storage", 10, 20)])
}

test_quota_fits_counts_the_claims_class_quota_only if {
	standard := mock_quota("standard.storageclass.storage.k8s.io/requests.storage", 15, 20)
	denials("quota-fits") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 20Gi needs 10Gi more standard.storageclass.storage.k8s.io/requests.storage, and ResourceQuota storage has 15Gi used of 20Gi: 5Gi over"} with input as mock_claim_in_quotas(10, 20, [standard])
	fast := mock_quota("fast.storageclass.storage.k8s.io/requests.storage", 15, 20)
	count(denials("quota-fits")) == 0 with input as mock_claim_in_quotas(10, 20, [fast])
}

test_quota_fits_ignores_class_quotas_of_a_claim_without_class if {
	claim := json.patch(mock_claim_in_quotas(10, 20, [mock_quota(".storageclass.storage.k8s.io/requests.storage", 15, 20)]), [{"op": "replace", "path": "/pvc/spec/storageClassName", "value": ""}])
	count(denials("quota-fits")) == 0 with input as claim
}

test_quota_fits_names_each_quota_that_cannot_fit if {
	other := object.union(mock_quota("requests.storage", 0, 5), {"name": "team"})
	claim := mock_claim_in_quotas(10, 20, [mock_quota("requests.storage", 15, 20), other])
	count(denials("quota-fits")) == 2 with input as claim
}

# A quota not counted yet has no used value; a limit of 0 still denies.
test_quota_fits_reads_a_missing_used_as_zero if {
	quota := {"name": "storage", "resources": {"requests.storage": {"hard": "", "used": "", "hardValue": 5 * gib}}}
	denials("quota-fits") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 20Gi needs 10Gi more requests.storage, and ResourceQuota storage has 0 used of 5Gi: 5Gi over"} with input as mock_claim_in_quotas(10, 20, [quota])
}

test_quota_fits_leaves_scoped_quotas_to_the_api_server if {
	scoped := object.union(mock_quota("requests.storage", 15, 20), {"scoped": true})
	count(denials("quota-fits")) == 0 with input as mock_claim_in_quotas(10, 20, [scoped])
}

test_quota_fits_ignores_claim_counts_and_changes_that_do_not_grow if {
	count(denials("quota-fits")) == 0 with input as mock_claim_in_quotas(10, 20, [mock_quota("persistentvolumeclaims", 3, 3)])
	count(denials("quota-fits")) == 0 with input as mock_claim_in_quotas(20, 10, [mock_quota("requests.storage", 30, 20)])
	count(denials("quota-fits")) == 0 with input as mock_claim_in_quotas(20, 20, [mock_quota("requests.storage", 30, 20)])
}

test_quota_fits_ignores_missing_quotas_and_statefulset_changes if {
	count(denials("quota-fits")) == 0 with input as mock_claim_in_quotas(10, 20, null)
	count(denials("quota-fits")) == 0 with input as mock_claim(10, 20)
	change := object.union(mock_statefulset(["logs"], []), {"resourceQuotas": [mock_quota("requests.storage", 15, 20)]})
	count(denials("quota-fits")) == 0 with input as change
}

test_quota_fits_can_be_disabled if {
	claim := mock_claim_in_quotas(10, 20, [mock_quota("requests.storage", 15, 20)])
	count(deny) == 0 with input as claim with data.claimwarden.params as {"disabled": ["quota-fits"]}
}

# mock_proposal(claims, growth, in_flight) gives a claim change the
# proposal's totals, in Gi of requests.storage.
mock_proposal(input_doc, claims, growth, in_flight) := object.union(input_doc, {"proposal": {
	"claims": claims,
	"growth": {"requests.storage": growth * gib},
	"inFlight": {"requests.storage": in_flight * gib},
}})

# Three claims 2Gi → 3Gi under 7Gi with 6Gi used: each claim's 1Gi fits, the
# proposal's 3Gi does not, so every claim of it is denied.
test_quota_fits_decides_over_the_whole_proposal if {
	claim := mock_proposal(mock_claim_in_quotas(2, 3, [mock_quota("requests.storage", 6, 7)]), 3, 3, 0)
	denials("quota-fits") == {"claim data-web-0 (StatefulSet shop/web): 2Gi → 3Gi with the other claims of the proposal (3 in all) needs 3Gi more requests.storage, and ResourceQuota storage has 6Gi used of 7Gi: 2Gi over"} with input as claim
	fits := mock_proposal(mock_claim_in_quotas(2, 3, [mock_quota("requests.storage", 4, 7)]), 3, 3, 0)
	count(denials("quota-fits")) == 0 with input as fits
}

test_quota_fits_counts_other_proposals_in_flight if {
	claim := mock_proposal(mock_claim_in_quotas(2, 3, [mock_quota("requests.storage", 4, 7)]), 3, 3, 2)
	denials("quota-fits") == {"claim data-web-0 (StatefulSet shop/web): 2Gi → 3Gi with the other claims of the proposal (3 in all) needs 3Gi more requests.storage besides 2Gi more for other proposals in flight, and ResourceQuota storage has 4Gi used of 7Gi: 2Gi over"} with input as claim
}

# A proposal's totals never make a claim that does not grow denied.
test_quota_fits_totals_ask_nothing_of_claims_that_do_not_grow if {
	count(denials("quota-fits")) == 0 with input as mock_proposal(mock_claim_in_quotas(3, 3, [mock_quota("requests.storage", 6, 7)]), 3, 3, 0)
}

test_quota_fits_denies_added_claims_past_persistentvolumeclaims if {
	change := object.union(mock_statefulset(["logs"], []), {
		"resourceQuotas": [{"name": "storage", "resources": {"persistentvolumeclaims": {"hard": "3", "used": "3", "hardValue": 3, "usedValue": 3}}}],
		"proposal": {"claims": 2, "growth": {"persistentvolumeclaims": 2}, "inFlight": {}},
	})
	denials("quota-fits") == {"StatefulSet shop/web: the proposal adds 2 claims (2 with other proposals in flight) counted in persistentvolumeclaims, and ResourceQuota storage has 3 used of 3: 2 over"} with input as change
	none := json.patch(change, [{"op": "replace", "path": "/proposal", "value": {"claims": 0, "growth": {}, "inFlight": {}}}])
	count(denials("quota-fits")) == 0 with input as none
}

test_quota_fits_words_a_single_claim_as_before if {
	claim := mock_proposal(mock_claim_in_quotas(10, 20, [mock_quota("requests.storage", 15, 20)]), 1, 10, 0)
	denials("quota-fits") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 20Gi needs 10Gi more requests.storage, and ResourceQuota storage has 15Gi used of 20Gi: 5Gi over"} with input as claim
}
