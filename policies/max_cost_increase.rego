# max-cost-increase: one change raises a claim's monthly cost by at most
# max_cost_increase. Off by default: without a limit (null) nothing is denied.
#
# A claim costs its request in GiB × (the monthly price per GiB of its
# StorageClass in storage_class_prices + that of its VolumeAttributesClass
# in volume_attributes_class_prices, a surcharge; 0 when not listed). The
# same prices let `claimwarden check` show the bill in the pull request.
#
# Parameters: max_cost_increase is a number ≥ 0 or null; the prices are
# objects of class names to numbers ≥ 0.
package claimwarden.claims

deny contains {"policy": "max-cost-increase", "msg": msg} if {
	# Cheapest first: null by default, so nothing below runs.
	limit := params.max_cost_increase
	limit != null
	_cost_may_rise
	_cost_increase > limit
	not "max-cost-increase" in _disabled_ids
	[before, after] := _monthly_costs
	[from, to] := _claim_sizes
	msg := sprintf(
		"%s: %s → %s on StorageClass %q raises its monthly cost from %s to %s (+%s), more than max_cost_increase %s",
		[claim_ref, _quantity_text("from", from), _quantity_text("to", to), _cost_class_to, format_money(before), format_money(after), format_money(after - before), format_money(limit)],
	)
}

# A limit the operator set but that cannot be applied is a denial, as with
# max-step: they must learn that it is not in force.
deny contains {"policy": "max-cost-increase", "msg": msg} if {
	params.max_cost_increase != null
	not _cost_params_valid
	input.change.kind == "claim"
	not "max-cost-increase" in _disabled_ids
	msg := sprintf(
		"parameters max_cost_increase (a number ≥ 0, or null for no limit), storage_class_prices and volume_attributes_class_prices (objects of class names to monthly prices per GiB ≥ 0) are malformed: %s",
		[json.marshal({k: params[k] | some k in ["max_cost_increase", "storage_class_prices", "volume_attributes_class_prices"]})],
	)
}

# A class without a price cannot be costed: say that the limit was not
# checked rather than pass silently.
warn contains {"policy": "max-cost-increase", "msg": msg} if {
	limit := params.max_cost_increase
	limit != null
	_cost_params_valid
	_claim_sizes
	not _cost_classes_priced # the usual case ends here
	some class in {_cost_class_from, _cost_class_to}
	not is_number(object.get(params.storage_class_prices, class, null))
	not "max-cost-increase" in _disabled_ids
	msg := sprintf(
		"%s: StorageClass %q has no price in storage_class_prices, so max_cost_increase %s was not checked",
		[claim_ref, class, format_money(limit)],
	)
}

# _monthly_costs is [before, after], the claim's monthly cost before and
# after the change; undefined for a class without a price. A rule, not a
# function, so that every rule above shares one computation.
_monthly_costs := [
	(from / gib_bytes) * _cost_price(_cost_class_from, _cost_vac_from),
	(to / gib_bytes) * _cost_price(_cost_class_to, _cost_vac_to),
] if {
	_cost_params_valid
	[from, to] := _claim_sizes
}

# _cost_increase is what the change adds to the monthly cost. With one
# price before and after (same classes, the usual case) it is the growth
# priced once: two arithmetic steps instead of five, and each step on a
# fraction is OPA's big-float arithmetic, the costliest part of the policy.
# The costs themselves are computed for a denial's message only.
_cost_increase := ((to - from) / gib_bytes) * _cost_price(_cost_class_to, _cost_vac_to) if {
	_cost_class_to == _cost_class_from
	_cost_vac_to == _cost_vac_from
	_cost_params_valid
	[from, to] := _claim_sizes
} else := after - before if {
	[before, after] := _monthly_costs
}

# _cost_may_rise holds unless the cost provably stays or falls: same classes
# and no growth (a label change, a shrink). Rounding keeps the order of two
# products with one price, and the limit is ≥ 0, so nothing is denied then;
# this spares the arithmetic above, the most expensive step of the policy.
_cost_may_rise if {
	[from, to] := _claim_sizes
	to > from
}

_cost_may_rise if _cost_class_to != _cost_class_from

_cost_may_rise if _cost_vac_to != _cost_vac_from

# _cost_classes_priced holds when both classes have a price (the
# parameters are valid when it is asked, so every price is a number).
_cost_classes_priced if {
	params.storage_class_prices[_cost_class_from]
	params.storage_class_prices[_cost_class_to]
}

# _cost_price is the price per GiB of a class with its attributes class's
# surcharge. Most claims have no surcharge: adding 0 would be one more
# floating-point operation for the same number.
_cost_price(class, vac) := params.storage_class_prices[class] + params.volume_attributes_class_prices[vac]

_cost_price(class, vac) := params.storage_class_prices[class] if not params.volume_attributes_class_prices[vac]

gib_bytes := 1073741824

# Once per evaluation: one lookup of params, no function calls.
_cost_params_valid if {
	p := params
	is_number(p.max_cost_increase)
	p.max_cost_increase >= 0
	is_object(p.storage_class_prices)
	is_object(p.volume_attributes_class_prices)
	every price in p.storage_class_prices {
		is_number(price)
		price >= 0
	}
	every price in p.volume_attributes_class_prices {
		is_number(price)
		price >= 0
	}
}

# The PVC's class (base claims and the API server fill in the default).
_cost_class_from := c if {
	c := input.pvc.spec.storageClassName
	is_string(c)
	c != ""
} else := c if {
	c := input.storageClass.metadata.name
	is_string(c)
} else := ""

# The template's class when it names one, else the PVC's.
_cost_class_to := c if {
	c := input.change.storageClassName.to
	is_string(c)
	c != ""
} else := _cost_class_from

_cost_vac_from := v if {
	v := input.change.volumeAttributesClassName.from
	is_string(v)
} else := v if {
	v := input.pvc.spec.volumeAttributesClassName
	is_string(v)
} else := ""

_cost_vac_to := v if {
	v := input.change.volumeAttributesClassName.to
	is_string(v)
} else := _cost_vac_from

# format_money renders an amount with two decimals ("3.40", "-0.05"), as
# check prints costs; sprintf's %.2f fails on whole numbers, which Rego
# keeps as integers.
format_money(x) := sprintf("%s%d.%02d", [sign, floor(cents / 100), cents % 100]) if {
	cents := round(abs(x) * 100)
	sign := _money_sign(x < 0)
}

_money_sign(true) := "-"

_money_sign(false) := ""
