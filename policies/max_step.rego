# max-step: one change grows a claim by at most max_step_percent (default 100)
# of its current request and by at most max_step_bytes (unset by default).
#
# A fat-fingered template (100Gi for 10Gi) is expensive and, with
# increase-only, irreversible: a PVC never shrinks back. Bounding each step
# makes large growth a sequence of deliberate changes.
#
# Parameters: max_step_percent is a number > 0; max_step_bytes is a whole
# number of bytes > 0 or a quantity string such as "50Gi"; null unsets either
# limit.
package claimwarden.claims

# The rules of this file are evaluated for every claim change; each states
# its cheapest failing condition first and asks whether max-step is disabled
# last (no condition before it can raise an error).

deny contains {"policy": "max-step", "msg": msg} if {
	[from, to] := _claim_sizes
	to > from
	limit := params.max_step_percent

	# A valid limit that is not null (_valid_limit).
	is_number(limit)
	limit > 0
	from > 0

	# (to - from) * 100 > limit * from, with one step on byte counts fewer
	# (each allocates big integers); integer arithmetic, so that exactly the
	# limit (10Gi → 20Gi at 100) passes.
	to * 100 > (limit + 100) * from
	not "max-step" in _disabled_ids
	msg := sprintf(
		"%s: %s → %s is +%v%%, more than max_step_percent %v",
		[claim_ref, _quantity_text("from", from), _quantity_text("to", to), _step_percent, limit],
	)
}

deny contains {"policy": "max-step", "msg": msg} if {
	# There is no byte limit by default.
	params.max_step_bytes != null
	limit := _max_step_bytes
	[from, to] := _claim_sizes
	step := to - from
	step > limit
	not "max-step" in _disabled_ids
	msg := sprintf(
		"%s: %s → %s is +%s, more than max_step_bytes %s",
		[claim_ref, _quantity_text("from", from), _quantity_text("to", to), format_bytes(step), format_bytes(limit)],
	)
}

# A malformed limit is a denial, not a silently skipped check: the operator
# asked for a bound and must learn that it is not in force.
deny contains {"policy": "max-step", "msg": msg} if {
	not _max_step_limits_usual
	p := params
	some name in ["max_step_percent", "max_step_bytes"]
	not _valid_limit(name, p[name])
	input.change.kind == "claim"
	not "max-step" in _disabled_ids
	msg := sprintf(
		"parameter %s (policies.params) must be %s, or null for no limit; got %s",
		[name, _limit_kinds[name], json.marshal(p[name])],
	)
}

# Without a current request (0) no percentage exists; say that only the
# absolute limit, if any, was checked rather than pass silently.
warn contains {"policy": "max-step", "msg": msg} if {
	# Cheaper than _claim_sizes and false for nearly every claim.
	input.change.storage.fromBytes <= 0
	[from, to] := _claim_sizes
	from <= 0
	to > from
	is_number(params.max_step_percent)
	not "max-step" in _disabled_ids
	msg := sprintf(
		"%s: the current request is %s, so max_step_percent %v was not checked",
		[claim_ref, _quantity_text("from", from), params.max_step_percent],
	)
}

# _step_percent is the increase in percent, rounded up to one decimal so that a
# step just above the limit never reads as equal to it. Undefined from 0: a
# division by zero is an error, and the engine makes errors fatal.
_step_percent := ceil(((to - from) * 1000) / from) / 10 if {
	[from, to] := _claim_sizes
	from > 0
}

# Undefined when unset (null) or malformed.
_max_step_bytes := p if {
	p := params.max_step_bytes
	is_number(p)
	_valid_limit("max_step_bytes", p)
} else := units.parse_bytes(p) if {
	p := params.max_step_bytes
	is_string(p)
	_valid_limit("max_step_bytes", p)
}

# _max_step_limits_usual holds for a positive percentage and no byte limit:
# the defaults and the usual configuration, valid limits recognised at the
# cost of one rule per verdict. Anything else is checked in full above.
_max_step_limits_usual if {
	p := params
	limit := p.max_step_percent
	is_number(limit)
	limit > 0
	p.max_step_bytes == null
}

_limit_kinds := {
	"max_step_percent": "a number greater than 0",
	"max_step_bytes": `a whole number of bytes greater than 0 or a quantity such as "50Gi"`,
}

_valid_limit(_, null)

_valid_limit("max_step_percent", p) if {
	is_number(p)
	p > 0
}

_valid_limit("max_step_bytes", p) if {
	is_number(p)
	p > 0
	round(p) == p
}

_valid_limit("max_step_bytes", p) if {
	is_string(p)
	regex.match(`^([0-9]+(\.[0-9]+)?(k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)|[0-9]+)$`, p)
	units.parse_bytes(p) > 0
}
