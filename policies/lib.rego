# Shared helpers of the shipped policies: parameters and their defaults, the
# disabled list, and how claims and sizes are named in messages.
#
# Everything is in package claimwarden.claims because the engine queries
# data.claimwarden.claims.deny and data.claimwarden.claims.warn; custom
# policies in the same package may use params, disabled(id), claim_ref,
# statefulset_ref and format_bytes(n) too (docs/policy-input.md).
package claimwarden.claims

# default_params holds every parameter a shipped policy reads. Configuration
# (policies.params) overrides them key by key; null unsets a limit.
default_params := {
	"disabled": [],
	"allow_recovery": true,
	"autoresize_used_percent": 80,
	"autoresize_inodes_percent": 90,
	"autoresize_horizon_seconds": 604800,
	"autoresize_target_free_percent": 30,
	"autoresize_min_step_bytes": 1073741824,
	"autoresize_max_bytes": null,
	"autoresize_cooldown_seconds": 86400,
	"autoresize_emergency_seconds": null,
	"max_step_percent": 100,
	"max_step_bytes": null,
	"max_cost_increase": null,
	"storage_class_prices": {},
	"volume_attributes_class_prices": {},
	"restart_window": null,
}

# params is what the policies use: the defaults overlaid with configuration.
params := object.union(default_params, _configured_params)

# The engine publishes configuration as data.claimwarden.params and copies it
# into input.params. input.params is only the fallback, so that the same
# policies also run under a plain `opa eval --input input.json`.
_configured_params := p if {
	p := data.claimwarden.params
	is_object(p)
} else := p if {
	p := input.params
	is_object(p)
} else := {}

# disabled(id) holds when policy id is listed in params.disabled.
disabled(id) if id in _disabled_ids

# _disabled_ids is the set of ids params.disabled lists; empty when the list is
# malformed. Computed once per evaluation, so the shipped policies ask
# `"<id>" in _disabled_ids` as their last condition, after the cheap ones.
_disabled_ids := {id | _disabled_list_valid; some id in params.disabled}

_disabled_list_valid if {
	ids := params.disabled
	is_array(ids)
	every id in ids {
		is_string(id)
	}
}

# A malformed disabled list cannot say which policies to skip; ignoring it
# would silently enforce, guessing would silently skip, so it is a denial for
# every change until the configuration is fixed (the engine fails closed too).
deny contains {"policy": "params", "msg": msg} if {
	not _disabled_list_valid
	msg := sprintf("parameter disabled (policies.params) must be a list of policy ids, got %s", [json.marshal(params.disabled)])
}

is_claim_change if input.change.kind == "claim"

is_statefulset_change if input.change.kind == "statefulset"

# claim_ref names a claim in messages: "claim data-web-0 (StatefulSet shop/web)".
# object.get keeps a message (rather than no denial at all) when a field is missing.
claim_ref := sprintf("claim %s (StatefulSet %s/%s)", [
	object.get(input, ["change", "claim"], "?"),
	object.get(input, ["change", "namespace"], "?"),
	object.get(input, ["change", "statefulSet"], "?"),
])

# statefulset_ref names a StatefulSet in messages: "StatefulSet shop/web".
statefulset_ref := sprintf("StatefulSet %s/%s", [
	object.get(input, ["change", "namespace"], "?"),
	object.get(input, ["change", "statefulSet"], "?"),
])

# Sizes in bytes; undefined (so no size rule fires) unless both are numbers.
storage_from_bytes := n if {
	n := input.change.storage.fromBytes
	is_number(n)
	is_number(input.change.storage.toBytes)
}

storage_to_bytes := n if {
	n := input.change.storage.toBytes
	is_number(n)
	is_number(input.change.storage.fromBytes)
}

# _claim_sizes is [from, to] in bytes for a claim change whose sizes are both
# numbers: one lookup for the shipped claim rules, which are evaluated for
# every claim change and mostly do not fire.
_claim_sizes := [from, to] if {
	input.change.kind == "claim"
	from := input.change.storage.fromBytes
	to := input.change.storage.toBytes
	is_number(from)
	is_number(to)
}

storage_grows if storage_to_bytes > storage_from_bytes

storage_shrinks if storage_to_bytes < storage_from_bytes

# Sizes as messages show them: the quantity as written ("10Gi"), else the
# bytes formatted.
storage_from := _quantity_text("from", storage_from_bytes)

storage_to := _quantity_text("to", storage_to_bytes)

_quantity_text(key, bytes) := s if {
	s := input.change.storage[key]
	is_string(s)
	s != ""
} else := format_bytes(bytes)

# format_bytes renders a byte count the way Kubernetes quantities are usually
# written: the largest unit, binary or decimal, that divides it ("15Gi",
# "10G"), else the largest binary unit with two decimals, marked "~" when
# that is rounded ("1.5Ki", "~1.33Gi"), else plain ("512", "0.5").
format_bytes(n) := sprintf("%v%s", [n / u[1], u[0]]) if {
	# % is an error on a fraction, and the engine makes builtin errors fatal.
	round(n) == n
	exact := [u | some u in _units; n != 0; n % u[1] == 0]
	u := exact[0]
} else := sprintf("%s%v%s", [approx, rounded, u[0]]) if {
	fitting := [u | some u in _units; endswith(u[0], "i"); abs(n) >= u[1]]
	u := fitting[0]
	rounded := round((n * 100) / u[1]) / 100
	approx := _approx_mark((rounded * u[1]) == n)
} else := sprintf("%v", [n])

_approx_mark(true) := ""

_approx_mark(false) := "~"

# Largest first, so the first unit that fits gives the shortest number.
_units := [
	["Ei", 1152921504606846976],
	["E", 1000000000000000000],
	["Pi", 1125899906842624],
	["P", 1000000000000000],
	["Ti", 1099511627776],
	["T", 1000000000000],
	["Gi", 1073741824],
	["G", 1000000000],
	["Mi", 1048576],
	["M", 1000000],
	["Ki", 1024],
	["k", 1000],
]
