package claimwarden.claims

cost_params := {
	"max_cost_increase": 5,
	"storage_class_prices": {"standard": 0.1, "fast": 0.25},
	"volume_attributes_class_prices": {"gold": 0.05},
}

# mock_vac_claim is mock_claim on VolumeAttributesClass from, changing to to.
mock_vac_claim(from_gi, to_gi, from, to) := json.patch(mock_claim(from_gi, to_gi), [
	{"op": "add", "path": "/pvc/spec/volumeAttributesClassName", "value": from},
	{"op": "add", "path": "/change/volumeAttributesClassName", "value": {"from": from, "to": to}},
])

test_max_cost_increase_is_off_by_default if {
	count(deny) == 0 with input as mock_claim(10, 20)
		with data.claimwarden.params as object.remove(cost_params, ["max_cost_increase"])
	count(warn) == 0 with input as mock_claim(10, 20)
}

test_max_cost_increase_denies_above_the_limit_naming_the_values if {
	# 10Gi → 80Gi on standard (0.10/GiB): 1.00 → 8.00, +7.00.
	denials("max-cost-increase") == {`claim data-web-0 (StatefulSet shop/web): 10Gi → 80Gi on StorageClass "standard" raises its monthly cost from 1.00 to 8.00 (+7.00), more than max_cost_increase 5.00`} with input as mock_claim(10, 80)
		with data.claimwarden.params as object.union(cost_params, {"max_step_percent": null})
}

test_max_cost_increase_allows_exactly_the_limit if {
	# +50Gi at 0.10 is +5.00.
	count(deny) == 0 with input as mock_claim(50, 100)
		with data.claimwarden.params as cost_params
}

test_max_cost_increase_adds_the_attributes_class_surcharge if {
	# 40Gi → 60Gi, plain → gold: 4.00 → 9.00 (60 × 0.15), +5.00 passes; 61Gi does not.
	count(denials("max-cost-increase")) == 0 with input as mock_vac_claim(40, 60, "", "gold")
		with data.claimwarden.params as cost_params
	denials("max-cost-increase") == {`claim data-web-0 (StatefulSet shop/web): 40Gi → 61Gi on StorageClass "standard" raises its monthly cost from 4.00 to 9.15 (+5.15), more than max_cost_increase 5.00`} with input as mock_vac_claim(40, 61, "", "gold")
		with data.claimwarden.params as cost_params

	# A claim already on gold pays the surcharge before and after.
	count(denials("max-cost-increase")) == 0 with input as mock_vac_claim(40, 73, "gold", "gold")
		with data.claimwarden.params as cost_params
	count(denials("max-cost-increase")) == 1 with input as mock_vac_claim(40, 74, "gold", "gold")
		with data.claimwarden.params as cost_params

	# The change names no attributes class when it keeps the PVC's.
	on_gold := json.patch(mock_claim(40, 74), [{"op": "add", "path": "/pvc/spec/volumeAttributesClassName", "value": "gold"}])
	denials("max-cost-increase") == {`claim data-web-0 (StatefulSet shop/web): 40Gi → 74Gi on StorageClass "standard" raises its monthly cost from 6.00 to 11.10 (+5.10), more than max_cost_increase 5.00`} with input as on_gold
		with data.claimwarden.params as cost_params
}

test_max_cost_increase_prices_the_template_class if {
	claim := json.patch(mock_claim(10, 20), [{"op": "replace", "path": "/change/storageClassName/to", "value": "fast"}])

	# standard 1.00 → fast 5.00.
	denials("max-cost-increase") == {`claim data-web-0 (StatefulSet shop/web): 10Gi → 20Gi on StorageClass "fast" raises its monthly cost from 1.00 to 5.00 (+4.00), more than max_cost_increase 3.00`} with input as claim
		with data.claimwarden.params as object.union(cost_params, {"max_cost_increase": 3})
}

test_max_cost_increase_reads_the_class_of_a_claim_without_pvc if {
	claim := object.union(mock_claim(10, 80), {"pvc": null})
	count(denials("max-cost-increase")) == 1 with input as claim
		with data.claimwarden.params as cost_params
	no_class := object.union(claim, {"storageClass": null, "change": {"storageClassName": null}})
	warnings("max-cost-increase") == {`claim data-web-0 (StatefulSet shop/web): StorageClass "" has no price in storage_class_prices, so max_cost_increase 5.00 was not checked`} with input as no_class
		with data.claimwarden.params as cost_params
}

test_max_cost_increase_neither_denies_nor_warns_a_priced_claim_within_the_limit if {
	count(denials("max-cost-increase")) == 0 with input as mock_claim(10, 20)
		with data.claimwarden.params as cost_params
	count(warnings("max-cost-increase")) == 0 with input as mock_claim(10, 20)
		with data.claimwarden.params as cost_params
}

test_max_cost_increase_without_growth_denies_only_a_class_change if {
	# Same size and classes (a label change), or a shrink: the cost cannot rise,
	# even with a limit of 0.
	zero := object.union(cost_params, {"max_cost_increase": 0})
	count(denials("max-cost-increase")) == 0 with input as mock_claim(20, 20)
		with data.claimwarden.params as zero
	count(denials("max-cost-increase")) == 0 with input as mock_claim(20, 10)
		with data.claimwarden.params as zero

	# The same size on a dearer class: standard 2.00 → fast 5.00.
	to_fast := json.patch(mock_claim(20, 20), [{"op": "replace", "path": "/change/storageClassName/to", "value": "fast"}])
	denials("max-cost-increase") == {`claim data-web-0 (StatefulSet shop/web): 20Gi → 20Gi on StorageClass "fast" raises its monthly cost from 2.00 to 5.00 (+3.00), more than max_cost_increase 2.00`} with input as to_fast
		with data.claimwarden.params as object.union(cost_params, {"max_cost_increase": 2})

	# The same size with a surcharge added: 20 × 0.10 → 20 × 0.15.
	count(denials("max-cost-increase")) == 1 with input as mock_vac_claim(20, 20, "", "gold")
		with data.claimwarden.params as zero
}

test_max_cost_increase_warns_about_an_unpriced_class if {
	params := json.patch(cost_params, [{"op": "replace", "path": "/storage_class_prices", "value": {"fast": 1}}])
	count(denials("max-cost-increase")) == 0 with input as mock_claim(10, 1000)
		with data.claimwarden.params as object.union(params, {"max_step_percent": null})
	warnings("max-cost-increase") == {`claim data-web-0 (StatefulSet shop/web): StorageClass "standard" has no price in storage_class_prices, so max_cost_increase 5.00 was not checked`} with input as mock_claim(10, 1000)
		with data.claimwarden.params as params
}

test_max_cost_increase_rejects_malformed_parameters if {
	msg := `parameters max_cost_increase (a number ≥ 0, or null for no limit), storage_class_prices and volume_attributes_class_prices (objects of class names to monthly prices per GiB ≥ 0) are malformed: {"max_cost_increase":"5","storage_class_prices":{"fast":0.25,"standard":0.1},"volume_attributes_class_prices":{"gold":0.05}}`
	denials("max-cost-increase") == {msg} with input as mock_claim(10, 11)
		with data.claimwarden.params as object.union(cost_params, {"max_cost_increase": "5"})
	count(denials("max-cost-increase")) == 1 with input as mock_claim(10, 11)
		with data.claimwarden.params as object.union(cost_params, {"max_cost_increase": -1})
	count(denials("max-cost-increase")) == 1 with input as mock_claim(10, 11)
		with data.claimwarden.params as object.union(cost_params, {"storage_class_prices": {"standard": "cheap"}})
	count(denials("max-cost-increase")) == 1 with input as mock_claim(10, 11)
		with data.claimwarden.params as object.union(cost_params, {"volume_attributes_class_prices": [1]})

	# Not a claim change: nothing to price.
	count(denials("max-cost-increase")) == 0 with input as mock_statefulset([], [])
		with data.claimwarden.params as object.union(cost_params, {"max_cost_increase": "5"})
}

test_max_cost_increase_can_be_disabled if {
	params := object.union(cost_params, {"disabled": ["max-cost-increase"], "max_step_percent": null})
	count(deny) == 0 with input as mock_claim(10, 1000)
		with data.claimwarden.params as params
	count(deny) == 0 with input as mock_claim(10, 11)
		with data.claimwarden.params as object.union(params, {"max_cost_increase": "x"})
}

test_max_cost_increase_ignores_shrinking if {
	count(denials("max-cost-increase")) == 0 with input as mock_claim(100, 1)
		with data.claimwarden.params as object.union(cost_params, {"max_cost_increase": 0})
}

test_format_money if {
	format_money(0) == "0.00"
	format_money(3.4) == "3.40"
	format_money(12) == "12.00"
	format_money(0.005) == "0.01"
	format_money(-0.05) == "-0.05"
	format_money(1234.567) == "1234.57"
}
