# autoresize: proposes growing a claim before its volume fills.
#
# Asked with change.kind "autoresize" and input.autoresize (how full the
# volume is and how fast it grows, from the kubelet's statistics). It
# proposes, as rule set resize, the size that leaves
# autoresize_target_free_percent of the volume free, at least
# autoresize_min_step_bytes more than the request, in whole GiB, at most
# autoresize_max_bytes, when the volume is used autoresize_used_percent or
# more, its inodes autoresize_inodes_percent or more, or it fills within
# autoresize_horizon_seconds at its recent rate; never within
# autoresize_cooldown_seconds of the last pull request's merge or close. The
# proposed size is then asked about as any claim change, so max-step,
# quota-fits and the organisation's rules still decide. When the volume
# fills within autoresize_emergency_seconds (null, the default: never), the
# proposal says "now": the claims grow at once, before the pull request is
# merged. A malformed parameter proposes nothing and warns.
package claimwarden.claims

resize contains {"policy": "autoresize", "to": to, "msg": msg, "now": now} if {
	input.change.kind == "autoresize"
	a := input.autoresize
	_autoresize_params_valid
	_autoresize_cooled(a)
	why := _autoresize_triggers(a)
	count(why) > 0
	to := _autoresize_target(a)
	to > a.requestBytes
	not "autoresize" in _disabled_ids
	now := _autoresize_emergency(a)
	msg := sprintf("%s: %s; proposing %s (the request is %s)%s", [claim_ref, concat(", ", sort(why)), format_bytes(to), format_bytes(a.requestBytes), _autoresize_now_text(now)])
}

# The volume fills sooner than a pull request is merged: grow it now.
_autoresize_emergency(a) if {
	is_number(params.autoresize_emergency_seconds)
	is_number(a.secondsToFull)
	a.secondsToFull <= params.autoresize_emergency_seconds
} else := false

_autoresize_now_text(true) := sprintf("; it fills within autoresize_emergency_seconds %v: growing the claims now, before the merge", [params.autoresize_emergency_seconds])

_autoresize_now_text(false) := ""

# The volume is full enough, or fills soon enough, to grow.
_autoresize_triggers(a) := {why |
	some why in [
		_autoresize_used(a),
		_autoresize_inodes(a),
		_autoresize_soon(a),
	]
	why != ""
}

_autoresize_used(a) := sprintf("%v%% used (%s of %s), at least autoresize_used_percent %v", [
	_percent(a.usedBytes, a.capacityBytes), format_bytes(a.usedBytes), format_bytes(a.capacityBytes),
	params.autoresize_used_percent,
]) if {
	a.capacityBytes > 0
	a.usedBytes * 100 >= params.autoresize_used_percent * a.capacityBytes
} else := ""

_autoresize_inodes(a) := sprintf("%v%% of inodes used, at least autoresize_inodes_percent %v", [
	_percent(a.inodesUsed, a.inodes), params.autoresize_inodes_percent,
]) if {
	a.inodes > 0
	a.inodesUsed * 100 >= params.autoresize_inodes_percent * a.inodes
} else := ""

_autoresize_soon(a) := sprintf("full in %s at its recent rate, within autoresize_horizon_seconds %v", [
	_duration(a.secondsToFull), params.autoresize_horizon_seconds,
]) if {
	is_number(a.secondsToFull)
	a.secondsToFull <= params.autoresize_horizon_seconds
} else := ""

# No proposal within the cooldown of the last pull request's merge or close.
_autoresize_cooled(a) if object.get(a, "secondsSinceLastProposal", null) == null

_autoresize_cooled(a) if a.secondsSinceLastProposal >= params.autoresize_cooldown_seconds

# The size that leaves target_free_percent free, a step at least, in whole
# GiB, capped. The cap comes from configuration, often as a float: floor
# makes it whole bytes written as an integer, which the engine requires.
_autoresize_target(a) := min([_autoresize_uncapped(a), floor(params.autoresize_max_bytes)]) if {
	is_number(params.autoresize_max_bytes)
} else := _autoresize_uncapped(a)

_autoresize_uncapped(a) := ceil(want / _gib) * _gib if {
	free := params.autoresize_target_free_percent
	needed := (a.usedBytes * 100) / (100 - free)
	want := max([needed, a.requestBytes + params.autoresize_min_step_bytes])
}

_gib := 1073741824

_percent(n, total) := round((n * 1000) / total) / 10

_duration(s) := sprintf("%vd", [round(s / 8640) / 10]) if s >= 86400
else := sprintf("%vh", [round(s / 360) / 10]) if s >= 3600
else := sprintf("%vm", [ceil(s / 60)])

_autoresize_numbers := [
	"autoresize_used_percent", "autoresize_inodes_percent", "autoresize_horizon_seconds",
	"autoresize_target_free_percent", "autoresize_min_step_bytes", "autoresize_cooldown_seconds",
]

_autoresize_params_valid if {
	every name in _autoresize_numbers {
		is_number(params[name])
		params[name] >= 0
	}
	params.autoresize_target_free_percent < 100
	_autoresize_max_valid
}

_autoresize_max_valid if {
	params.autoresize_max_bytes == null
	_autoresize_emergency_valid
}

_autoresize_emergency_valid if params.autoresize_emergency_seconds == null

_autoresize_emergency_valid if {
	is_number(params.autoresize_emergency_seconds)
	params.autoresize_emergency_seconds >= 0
}

_autoresize_max_valid if {
	is_number(params.autoresize_max_bytes)
	params.autoresize_max_bytes > 0
	_autoresize_emergency_valid
}

warn contains {"policy": "autoresize", "msg": msg} if {
	input.change.kind == "autoresize"
	not _autoresize_params_valid
	not "autoresize" in _disabled_ids
	values := {name: params[name] | some name in array.concat(_autoresize_numbers, ["autoresize_max_bytes", "autoresize_emergency_seconds"])}
	msg := sprintf("autoresize parameters (policies.params) are malformed, so nothing is proposed: numbers ≥ 0, autoresize_target_free_percent below 100, autoresize_max_bytes null or > 0, autoresize_emergency_seconds null or ≥ 0; got %s", [json.marshal(values)])
}

warn contains {"policy": "autoresize", "msg": msg} if {
	input.change.kind == "autoresize"
	a := input.autoresize
	_autoresize_params_valid
	count(_autoresize_triggers(a)) > 0
	_autoresize_target(a) <= a.requestBytes
	not "autoresize" in _disabled_ids
	msg := sprintf("%s: would grow, but the request %s is at autoresize_max_bytes %s already", [claim_ref, format_bytes(a.requestBytes), format_bytes(params.autoresize_max_bytes)])
}
