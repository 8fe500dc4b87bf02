package claimwarden.claims

# mock_autoresize is the autoresize question for data-web-0 of shop/web: a
# volume of cap Gi with used Gi used, the claim requesting request Gi.
mock_autoresize(used, cap, request) := {
	"change": {"kind": "autoresize", "namespace": "shop", "statefulSet": "web", "claim": "data-web-0", "template": "data", "ordinal": 0},
	"autoresize": {
		"capacityBytes": cap * gib, "usedBytes": used * gib, "inodes": 1000, "inodesUsed": 10,
		"growthBytesPerSecond": 0, "requestBytes": request * gib,
	},
}

resizes := {[r.to, r.msg] | some r in resize; r.policy == "autoresize"}

now := {r.now | some r in resize; r.policy == "autoresize"}

with_autoresize(fields) := object.union(mock_autoresize(1, 10, 10), {"autoresize": fields})

test_autoresize_proposes_the_size_that_leaves_the_target_free if {
	# 9Gi used: 9 / 0.7 = 12.9Gi, rounded up to 13Gi.
	resizes == {[13 * gib, "claim data-web-0 (StatefulSet shop/web): 90% used (9Gi of 10Gi), at least autoresize_used_percent 80; proposing 13Gi (the request is 10Gi)"]} with input as mock_autoresize(9, 10, 10)
}

test_autoresize_proposes_nothing_below_the_triggers if {
	count(resize) == 0 with input as mock_autoresize(5, 10, 10)
	count(warn) == 0 with input as mock_autoresize(5, 10, 10)
}

test_autoresize_grows_a_step_at_least if {
	# Inodes run out with little data: the step, 11Gi.
	resizes == {[11 * gib, "claim data-web-0 (StatefulSet shop/web): 95% of inodes used, at least autoresize_inodes_percent 90; proposing 11Gi (the request is 10Gi)"]} with input as with_autoresize({"inodesUsed": 950})
}

test_autoresize_forecasts if {
	resizes == {[11 * gib, "claim data-web-0 (StatefulSet shop/web): full in 2d at its recent rate, within autoresize_horizon_seconds 604800; proposing 11Gi (the request is 10Gi)"]} with input as with_autoresize({"secondsToFull": 172800})
	some [_, hours] in resizes with input as with_autoresize({"secondsToFull": 7200})
	contains(hours, "full in 2h at its recent rate")
	some [_, minutes] in resizes with input as with_autoresize({"secondsToFull": 299})
	contains(minutes, "full in 5m at its recent rate")

	# Beyond the horizon, nothing.
	count(resize) == 0 with input as with_autoresize({"secondsToFull": 604801})
}

test_autoresize_says_every_trigger if {
	some [_, msg] in resizes with input as object.union(mock_autoresize(9, 10, 10), {"autoresize": {"inodesUsed": 990, "secondsToFull": 600}})
	msg == "claim data-web-0 (StatefulSet shop/web): 90% used (9Gi of 10Gi), at least autoresize_used_percent 80, 99% of inodes used, at least autoresize_inodes_percent 90, full in 10m at its recent rate, within autoresize_horizon_seconds 604800; proposing 13Gi (the request is 10Gi)"
}

test_autoresize_waits_for_the_cooldown if {
	count(resize) == 0 with input as object.union(mock_autoresize(9, 10, 10), {"autoresize": {"secondsSinceLastProposal": 3600}})
	count(resize) == 1 with input as object.union(mock_autoresize(9, 10, 10), {"autoresize": {"secondsSinceLastProposal": 86400}})
}

test_autoresize_is_capped if {
	resizes == {[12 * gib, "claim data-web-0 (StatefulSet shop/web): 90% used (9Gi of 10Gi), at least autoresize_used_percent 80; proposing 12Gi (the request is 10Gi)"]} with input as mock_autoresize(9, 10, 10)
		with data.claimwarden.params as {"autoresize_max_bytes": 12 * gib}

	# At the cap already: nothing proposed, and a warning says why.
	count(resize) == 0 with input as mock_autoresize(11, 12, 12) with data.claimwarden.params as {"autoresize_max_bytes": 12 * gib}
	warnings("autoresize") == {"claim data-web-0 (StatefulSet shop/web): would grow, but the request 12Gi is at autoresize_max_bytes 12Gi already"} with input as mock_autoresize(11, 12, 12)
		with data.claimwarden.params as {"autoresize_max_bytes": 12 * gib}
}

# A cap from configuration arrives as a JSON float (YAML's numbers do):
# the proposal is still whole bytes, written as an integer, and a cap that
# is not whole bytes rounds down, so the proposal stays within it.
test_autoresize_cap_gives_whole_bytes if {
	some [to, _] in resizes with input as mock_autoresize(9, 10, 10)
		with data.claimwarden.params as {"autoresize_max_bytes": 1.2884901888e+10}
	json.marshal(to) == "12884901888"

	some [half, _] in resizes with input as mock_autoresize(9, 10, 10)
		with data.claimwarden.params as {"autoresize_max_bytes": 12884901888.5}
	json.marshal(half) == "12884901888"
}

test_autoresize_malformed_parameters_propose_nothing_and_warn if {
	every p in [{"autoresize_used_percent": "80"}, {"autoresize_target_free_percent": 100}, {"autoresize_max_bytes": 0}, {"autoresize_cooldown_seconds": -1}] {
		count(resize) == 0 with input as mock_autoresize(9, 10, 10) with data.claimwarden.params as p
		some msg in warnings("autoresize") with input as mock_autoresize(9, 10, 10) with data.claimwarden.params as p
		startswith(msg, "autoresize parameters (policies.params) are malformed, so nothing is proposed")
	}
}

test_autoresize_can_be_disabled if {
	count(resize) == 0 with input as mock_autoresize(9, 10, 10) with data.claimwarden.params as {"disabled": ["autoresize"]}
	count(warn) == 0 with input as mock_autoresize(9, 10, 10) with data.claimwarden.params as {"disabled": ["autoresize"], "autoresize_max_bytes": 0}
}

test_autoresize_asks_nothing_of_other_questions if {
	count(resize) == 0 with input as object.union(mock_claim(10, 20), {"autoresize": mock_autoresize(9, 10, 10).autoresize})

	# An empty volume of no reported capacity triggers nothing.
	count(resize) == 0 with input as mock_autoresize(0, 0, 10)
}

test_autoresize_grows_now_only_within_the_emergency_bound if {
	now == {false} with input as with_autoresize({"secondsToFull": 7200})
	now == {false} with input as with_autoresize({"secondsToFull": 7200}) with data.claimwarden.params as {"autoresize_emergency_seconds": 3600}
	now == {true} with input as with_autoresize({"secondsToFull": 1800}) with data.claimwarden.params as {"autoresize_emergency_seconds": 3600}
	some [_, msg] in resizes with input as with_autoresize({"secondsToFull": 1800}) with data.claimwarden.params as {"autoresize_emergency_seconds": 3600}
	endswith(msg, "; it fills within autoresize_emergency_seconds 3600: growing the claims now, before the merge")
}

test_autoresize_refuses_a_malformed_emergency_bound if {
	count(resize) == 0 with input as with_autoresize({"secondsToFull": 1800}) with data.claimwarden.params as {"autoresize_emergency_seconds": "soon"}
	count(warn) == 1 with input as with_autoresize({"secondsToFull": 1800}) with data.claimwarden.params as {"autoresize_emergency_seconds": "soon"}
}
