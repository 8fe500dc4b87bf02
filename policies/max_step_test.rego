package claimwarden.claims

# The issue's must-show: +150% names the claim, from, to and the limit.
test_max_step_denies_150_percent_by_default if {
	denials("max-step") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 25Gi is +150%, more than max_step_percent 100"} with input as mock_claim(10, 25)
}

test_max_step_allows_exactly_the_limit if {
	count(deny) == 0 with input as mock_claim(10, 20)
}

# One byte above +100% is denied and reads as more than 100, not "+100%".
test_max_step_denies_one_byte_above_the_limit if {
	denials("max-step") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 21474836481 is +100.1%, more than max_step_percent 100"} with input as mock_claim_bytes("10Gi", 10 * gib, "21474836481", (20 * gib) + 1)
}

test_max_step_rounds_fractions_up_to_one_decimal if {
	denials("max-step") == {"claim data-web-0 (StatefulSet shop/web): 3Gi → 7Gi is +133.4%, more than max_step_percent 100"} with input as mock_claim(3, 7)
}

test_max_step_percent_may_be_a_fraction if {
	denials("max-step") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 11Gi is +10%, more than max_step_percent 7.5"} with input as mock_claim(10, 11)
		with data.claimwarden.params as {"max_step_percent": 7.5}
}

test_max_step_percent_is_configurable if {
	denials("max-step") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 16Gi is +60%, more than max_step_percent 50"} with input as mock_claim(10, 16)
		with data.claimwarden.params as {"max_step_percent": 50}
	count(deny) == 0 with input as mock_claim(10, 15)
		with data.claimwarden.params as {"max_step_percent": 50}
	count(deny) == 0 with input as mock_claim(10, 35)
		with data.claimwarden.params as {"max_step_percent": 250}
}

test_max_step_bytes_is_unset_by_default if {
	# +1000Gi is only +100%: nothing but the percentage applies by default.
	count(deny) == 0 with input as mock_claim(1000, 2000)
}

test_max_step_bytes_as_a_number if {
	denials("max-step") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 25Gi is +15Gi, more than max_step_bytes 10Gi"} with input as mock_claim(10, 25)
		with data.claimwarden.params as {"max_step_percent": null, "max_step_bytes": 10737418240}

	# Exactly the limit passes.
	count(deny) == 0 with input as mock_claim(10, 20)
		with data.claimwarden.params as {"max_step_bytes": 10737418240}
}

test_max_step_bytes_as_a_quantity if {
	denials("max-step") == {"claim data-web-0 (StatefulSet shop/web): 100Gi → 150Gi is +50Gi, more than max_step_bytes 20Gi"} with input as mock_claim(100, 150)
		with data.claimwarden.params as {"max_step_bytes": "20Gi"}
	count(deny) == 0 with input as mock_claim(100, 120)
		with data.claimwarden.params as {"max_step_bytes": "20Gi"}

	# Decimal units are decimal: 20G is less than 20Gi.
	count(denials("max-step")) == 1 with input as mock_claim(100, 120)
		with data.claimwarden.params as {"max_step_bytes": "20G"}
}

test_max_step_reports_both_limits if {
	denials("max-step") == {
		"claim data-web-0 (StatefulSet shop/web): 10Gi → 25Gi is +150%, more than max_step_percent 100",
		"claim data-web-0 (StatefulSet shop/web): 10Gi → 25Gi is +15Gi, more than max_step_bytes 5Gi",
	} with input as mock_claim(10, 25)
		with data.claimwarden.params as {"max_step_bytes": "5Gi"}
}

test_max_step_without_limits_allows_anything if {
	count(deny) == 0 with input as mock_claim(10, 1000)
		with data.claimwarden.params as {"max_step_percent": null, "max_step_bytes": null}
}

test_max_step_can_be_disabled if {
	count(deny) == 0 with input as mock_claim(10, 1000)
		with data.claimwarden.params as {"disabled": ["max-step"], "max_step_bytes": "1Gi"}
}

test_max_step_reads_input_params_without_data if {
	claim := object.union(mock_claim(10, 16), {"params": {"max_step_percent": 50}})
	count(denials("max-step")) == 1 with input as claim
}

test_max_step_rejects_malformed_parameters if {
	denials("max-step") == {"parameter max_step_percent (policies.params) must be a number greater than 0, or null for no limit; got \"100\""} with input as mock_claim(10, 11)
		with data.claimwarden.params as {"max_step_percent": "100"}
	denials("max-step") == {"parameter max_step_bytes (policies.params) must be a whole number of bytes greater than 0 or a quantity such as \"50Gi\", or null for no limit; got \"lots\""} with input as mock_claim(10, 11)
		with data.claimwarden.params as {"max_step_bytes": "lots"}
	count(denials("max-step")) == 1 with input as mock_claim(10, 11)
		with data.claimwarden.params as {"max_step_percent": 0}
	count(denials("max-step")) == 1 with input as mock_claim(10, 11)
		with data.claimwarden.params as {"max_step_percent": -5}
	count(denials("max-step")) == 1 with input as mock_claim(10, 11)
		with data.claimwarden.params as {"max_step_bytes": "0Gi"}

	count(denials("max-step")) == 1 with input as mock_claim(10, 11)
		with data.claimwarden.params as {"max_step_bytes": 1.5}

	# "1.5" would be truncated to 1 byte by units.parse_bytes: a plain
	# number string must be whole bytes.
	count(denials("max-step")) == 1 with input as mock_claim(10, 11)
		with data.claimwarden.params as {"max_step_bytes": "1.5"}
}

test_max_step_parameters_do_not_matter_when_disabled if {
	count(deny) == 0 with input as mock_claim(10, 11)
		with data.claimwarden.params as {"disabled": ["max-step"], "max_step_percent": "x"}
}

test_max_step_ignores_shrinking_and_unchanged_sizes if {
	count(denials("max-step")) == 0 with input as mock_claim(100, 1)
	count(denials("max-step")) == 0 with input as mock_claim(10, 10)
		with data.claimwarden.params as {"max_step_bytes": 1}
}

test_max_step_without_a_current_request_warns_and_checks_bytes_only if {
	claim := mock_claim_bytes("0", 0, "10Gi", 10 * gib)
	count(deny) == 0 with input as claim
	not _step_percent with input as claim
	warnings("max-step") == {"claim data-web-0 (StatefulSet shop/web): the current request is 0, so max_step_percent 100 was not checked"} with input as claim
	count(denials("max-step")) == 1 with input as claim
		with data.claimwarden.params as {"max_step_bytes": "5Gi"}
}

test_max_step_ignores_statefulset_changes if {
	change := json.patch(mock_claim(10, 100), [{"op": "replace", "path": "/change/kind", "value": "statefulset"}])
	count(deny) == 0 with input as change
}

test_max_step_needs_no_pvc_or_storage_class if {
	claim := object.union(mock_claim(10, 25), {"pvc": null, "storageClass": null})
	count(denials("max-step")) == 1 with input as claim
}

test_max_step_keeps_the_quantities_as_written if {
	denials("max-step") == {"claim data-web-0 (StatefulSet shop/web): 10G → 25G is +150%, more than max_step_percent 100"} with input as mock_claim_bytes("10G", 10000000000, "25G", 25000000000)
}
