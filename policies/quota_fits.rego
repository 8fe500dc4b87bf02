# quota-fits: a proposal grows its claims only as far as the namespace's
# ResourceQuotas leave room for, all of its claims together.
#
# The API server refuses a PVC update whose larger request would take a
# quota's requests.storage (or, for the claim's class,
# <class>.storageclass.storage.k8s.io/requests.storage) past its hard limit.
# Decided claim by claim, the first claims would grow and the rest be
# refused half-way, after the StatefulSet was re-created. So each growing
# claim is asked with the whole proposal's totals (input.proposal.growth:
# what all its claims still have to grow; input.proposal.inFlight: what the
# other StatefulSets' allowed proposals in the namespace still have to) and
# denied, like every other claim of the proposal, when the whole does not
# fit. The denial names the quota, its use and limit, and by how much the
# proposal is over. Without input.proposal, the claim's own growth counts.
#
# The claims a proposal adds (a template added) count against
# persistentvolumeclaims too; that is asked with the StatefulSet-level
# change.
#
# Scoped quotas (a VolumeAttributesClass scope) count some claims only; the
# input does not say which, so they are left to the API server, whose
# refusal names the quota too.
package claimwarden.claims

deny contains {"policy": "quota-fits", "msg": msg} if {
	[from, to] := _claim_sizes
	to > from
	quotas := input.resourceQuotas
	quotas != null # none, the usual case: nothing below runs
	own := to - from # once, not once per quota and resource
	some quota in quotas
	not quota.scoped == true
	some resource in _quota_storage_resources
	amount := quota.resources[resource]
	need := _quota_need(resource, own)
	used := object.get(amount, "usedValue", 0)
	used + need.bytes > amount.hardValue
	not "quota-fits" in _disabled_ids
	msg := sprintf("%s: %s → %s %s %s%s, and ResourceQuota %s has %s used of %s: %s over", [
		claim_ref,
		_quantity_text("from", from), _quantity_text("to", to),
		need.text, resource, need.others, quota.name,
		_quota_text(amount, "used", used),
		_quota_text(amount, "hard", amount.hardValue),
		format_bytes((used + need.bytes) - amount.hardValue),
	])
}

# The claims a proposal adds, against persistentvolumeclaims quotas.
deny contains {"policy": "quota-fits", "msg": msg} if {
	is_statefulset_change
	p := input.proposal
	is_object(p)
	quotas := input.resourceQuotas
	quotas != null
	some quota in quotas
	not quota.scoped == true
	some resource, amount in quota.resources
	endswith(resource, "persistentvolumeclaims")
	added := object.get(p, ["growth", resource], 0)
	added > 0
	n := added + object.get(p, ["inFlight", resource], 0)
	used := object.get(amount, "usedValue", 0)
	used + n > amount.hardValue
	not "quota-fits" in _disabled_ids
	msg := sprintf("%s: the proposal adds %v claims (%v with other proposals in flight) counted in %s, and ResourceQuota %s has %v used of %v: %v over", [
		statefulset_ref, added, n, resource, quota.name, used, amount.hardValue, (used + n) - amount.hardValue,
	])
}

# _quota_need is what the proposal needs of resource in bytes, and the
# words for it: the whole proposal's and the others' in flight when the
# input has them, else the claim's own growth.
_quota_need(resource, own) := {"bytes": mine + others, "text": _mine_text(object.get(p, "claims", 1), mine), "others": _others_text(others)} if {
	p := input.proposal
	is_object(p)
	mine := object.get(p, ["growth", resource], own)
	others := object.get(p, ["inFlight", resource], 0)
} else := {"bytes": own, "text": _mine_text(1, own), "others": ""}

_mine_text(claims, mine) := sprintf("needs %s more", [format_bytes(mine)]) if claims <= 1
else := sprintf("with the other claims of the proposal (%d in all) needs %s more", [claims, format_bytes(mine)])

_others_text(others) := "" if others <= 0
else := sprintf(" besides %s more for other proposals in flight", [format_bytes(others)])

# The resources a claim's request counts against: every claim's, and its
# class's when the PVC names one.
_quota_storage_resources contains "requests.storage"

_quota_storage_resources contains sprintf("%s.storageclass.storage.k8s.io/requests.storage", [class]) if {
	class := input.pvc.spec.storageClassName
	is_string(class)
	class != ""
}

_quota_text(amount, key, value) := s if {
	s := amount[key]
	is_string(s)
	s != ""
} else := format_bytes(value)
