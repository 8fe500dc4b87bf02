# Tests of lib.rego, and the fixtures every *_test.rego file builds on.
package claimwarden.claims

gib := 1073741824

# mock_claim(from, to) is a claim change of template "data" of StatefulSet
# shop/web from `from` Gi to `to` Gi, on StorageClass "standard" which allows
# expansion: every shipped policy passes it unless a test changes something.
mock_claim(from, to) := {
	"change": {
		"kind": "claim",
		"namespace": "shop",
		"statefulSet": "web",
		"claim": "data-web-0",
		"template": "data",
		"ordinal": 0,
		"storage": {
			"from": sprintf("%dGi", [from]),
			"to": sprintf("%dGi", [to]),
			"fromBytes": from * gib,
			"toBytes": to * gib,
		},
		"storageClassName": {"from": "standard", "to": "standard"},
	},
	"pvc": {
		"metadata": {"name": "data-web-0", "namespace": "shop"},
		"spec": {
			"storageClassName": "standard",
			"resources": {"requests": {"storage": sprintf("%dGi", [from])}},
		},
		"status": {"phase": "Bound", "capacity": {"storage": sprintf("%dGi", [from])}},
	},
	"storageClass": {
		"metadata": {"name": "standard"},
		"provisioner": "ebs.csi.aws.com",
		"allowVolumeExpansion": true,
	},
	"source": {"kind": "Kustomization", "namespace": "flux-system", "name": "shop"},
	"params": {},
}

# mock_claim_bytes is mock_claim with sizes given in bytes and as text.
mock_claim_bytes(from, from_bytes, to, to_bytes) := json.patch(mock_claim(1, 1), [
	{"op": "replace", "path": "/change/storage", "value": {
		"from": from, "to": to,
		"fromBytes": from_bytes, "toBytes": to_bytes,
	}},
])

# mock_statefulset(added, removed) is a StatefulSet-level change of shop/web.
mock_statefulset(added, removed) := {
	"change": {
		"kind": "statefulset",
		"namespace": "shop",
		"statefulSet": "web",
		"ordinal": 0,
		"templatesAdded": added,
		"templatesRemoved": removed,
	},
	"pvc": null,
	"storageClass": null,
	"template": null,
	"source": {"kind": "Kustomization", "namespace": "flux-system", "name": "shop"},
	"params": {},
}

# mock_restart is the question asked before Pod web-0 is evicted so that
# data-web-0's file system grows: a claim change with restart true and no
# storage change, the PVC already patched to 20Gi and expanded by the
# storage, its file system waiting (FileSystemResizePending).
mock_restart := json.patch(mock_claim(20, 20), [
	{"op": "remove", "path": "/change/storage"},
	{"op": "remove", "path": "/change/storageClassName"},
	{"op": "add", "path": "/change/restart", "value": true},
	{"op": "add", "path": "/change/pod", "value": "web-0"},
	{"op": "replace", "path": "/pvc/status/capacity/storage", "value": "10Gi"},
	{"op": "add", "path": "/pvc/status/conditions", "value": [{"type": "FileSystemResizePending", "status": "True"}]},
])

# denials(id) and warnings(id) are the messages one policy produced.
denials(id) := {d.msg | some d in deny; d.policy == id}

warnings(id) := {w.msg | some w in warn; w.policy == id}

test_fixtures_pass_every_policy if {
	count(deny) == 0 with input as mock_claim(10, 20)
	count(warn) == 0 with input as mock_claim(10, 20)
	count(deny) == 0 with input as mock_statefulset([], [])
}

# A restart question asks nothing about sizes: no shipped policy on sizes,
# classes or quotas has anything to say about it, even with every limit set
# and a class that no longer allows expansion or a quota already full.
test_restart_questions_pass_every_policy if {
	count(deny) == 0 with input as mock_restart
	count(warn) == 0 with input as mock_restart
	strict := json.patch(mock_restart, [
		{"op": "replace", "path": "/storageClass/allowVolumeExpansion", "value": false},
		{"op": "add", "path": "/resourceQuotas", "value": [{"name": "full", "resources": {"requests.storage": {"hard": "20Gi", "used": "20Gi", "hardValue": 20 * gib, "usedValue": 20 * gib}}}]},
	])
	count(deny) == 0 with input as strict
		with data.claimwarden.params as {
			"max_step_percent": 1, "max_step_bytes": "1Ki", "max_cost_increase": 0,
			"storage_class_prices": {"standard": 1},
		}
}

test_params_are_the_defaults_without_configuration if {
	params == {
		"disabled": [], "allow_recovery": true, "max_step_percent": 100, "max_step_bytes": null,
		"max_cost_increase": null, "storage_class_prices": {}, "volume_attributes_class_prices": {},
		"restart_window": null,
		"autoresize_used_percent": 80, "autoresize_inodes_percent": 90, "autoresize_horizon_seconds": 604800,
		"autoresize_target_free_percent": 30, "autoresize_min_step_bytes": 1073741824, "autoresize_max_bytes": null,
		"autoresize_cooldown_seconds": 86400,
		"autoresize_emergency_seconds": null,
	} with input as {}
}

test_configured_params_override_defaults_key_by_key if {
	p := params with data.claimwarden.params as {"max_step_percent": 50, "custom": "x"}
	p == {
		"disabled": [], "allow_recovery": true, "max_step_percent": 50, "max_step_bytes": null, "custom": "x",
		"max_cost_increase": null, "storage_class_prices": {}, "volume_attributes_class_prices": {},
		"restart_window": null,
		"autoresize_used_percent": 80, "autoresize_inodes_percent": 90, "autoresize_horizon_seconds": 604800,
		"autoresize_target_free_percent": 30, "autoresize_min_step_bytes": 1073741824, "autoresize_max_bytes": null,
		"autoresize_cooldown_seconds": 86400,
		"autoresize_emergency_seconds": null,
	}
}

test_configured_null_unsets_a_default if {
	p := params with data.claimwarden.params as {"max_step_percent": null}
	p.max_step_percent == null
}

test_input_params_are_the_fallback_for_data if {
	p := params with input as {"params": {"max_step_percent": 30}}
	p.max_step_percent == 30
}

test_data_params_win_over_input_params if {
	p := params with input as {"params": {"max_step_percent": 30}}
		with data.claimwarden.params as {"max_step_percent": 70}
	p.max_step_percent == 70
}

test_disabled_lists_policy_ids if {
	disabled("max-step") with data.claimwarden.params as {"disabled": ["max-step", "template-count"]}
	not disabled("increase-only") with data.claimwarden.params as {"disabled": ["max-step"]}
	not disabled("max-step") with input as {}
}

test_malformed_disabled_is_a_denial_for_every_change if {
	msg := "parameter disabled (policies.params) must be a list of policy ids, got \"max-step\""
	denials("params") == {msg} with input as mock_claim(10, 11)
		with data.claimwarden.params as {"disabled": "max-step"}
	denials("params") == {msg} with input as mock_statefulset([], [])
		with data.claimwarden.params as {"disabled": "max-step"}

	# A malformed list disables nothing: max-step still denies.
	count(denials("max-step")) == 1 with input as mock_claim(10, 100)
		with data.claimwarden.params as {"disabled": "max-step"}
}

test_disabled_entries_must_be_strings if {
	denials("params") == {"parameter disabled (policies.params) must be a list of policy ids, got [\"max-step\",1]"} with input as mock_claim(10, 11)
		with data.claimwarden.params as {"disabled": ["max-step", 1]}
	not disabled("max-step") with data.claimwarden.params as {"disabled": ["max-step", 1]}
}

test_claim_ref_and_statefulset_ref_name_the_subject if {
	claim_ref == "claim data-web-0 (StatefulSet shop/web)" with input as mock_claim(1, 2)
	statefulset_ref == "StatefulSet shop/web" with input as mock_statefulset([], [])
}

test_refs_survive_a_missing_change if {
	claim_ref == "claim ? (StatefulSet ?/?)" with input as {"change": null}
	statefulset_ref == "StatefulSet ?/?" with input as {}
}

test_format_bytes if {
	format_bytes(0) == "0"
	format_bytes(512) == "512"
	format_bytes(1000) == "1k"
	format_bytes(1024) == "1Ki"
	format_bytes(1536) == "1.5Ki"
	format_bytes(1024000) == "1000Ki"
	format_bytes(10 * gib) == "10Gi"
	format_bytes(10000000000) == "10G"
	format_bytes(1431655765) == "~1.33Gi"
	format_bytes(2 * 1099511627776) == "2Ti"
	format_bytes(-1 * gib) == "-1Gi"

	# Fractions would make % fail; they are printed as they are.
	format_bytes(0.5) == "0.5"
	format_bytes(1536.5) == "~1.5Ki"
}

test_sizes_without_text_are_formatted_from_bytes if {
	claim := mock_claim_bytes("", 10 * gib, null, 25 * gib)
	storage_from == "10Gi" with input as claim
	storage_to == "25Gi" with input as claim
}

# The shipped policies test the kind and sizes on their own (_claim_sizes);
# these helpers are for custom policies.
test_kind_and_size_helpers if {
	is_claim_change with input as mock_claim(10, 20)
	not is_statefulset_change with input as mock_claim(10, 20)
	is_statefulset_change with input as mock_statefulset([], [])
	not is_claim_change with input as mock_statefulset([], [])
	storage_grows with input as mock_claim(10, 20)
	not storage_shrinks with input as mock_claim(10, 20)
	storage_shrinks with input as mock_claim(20, 10)
	not storage_grows with input as mock_claim(20, 10)
	not storage_grows with input as mock_claim(10, 10)
	not storage_shrinks with input as mock_claim(10, 10)
}

test_sizes_are_undefined_unless_both_are_numbers if {
	not storage_grows with input as mock_claim_bytes("10Gi", 10 * gib, "25Gi", null)
	not storage_shrinks with input as mock_claim_bytes("10Gi", "10Gi", "5Gi", 5 * gib)
	not storage_grows with input as {"change": {"kind": "claim", "storage": null}}
}

# The engine fails closed on runtime errors, so an input with nothing in it
# must evaluate cleanly (and deny nothing: there is no change to judge).
test_empty_and_null_inputs_evaluate_without_error if {
	count(deny) == 0 with input as {}
	count(warn) == 0 with input as {}
	count(deny) == 0 with input as {"change": null, "pvc": null, "storageClass": null, "template": null}
	count(deny) == 0 with input as {"change": {"kind": "claim"}, "pvc": null, "storageClass": null}
}
