# quota-fits: a claim grows only as far as the namespace's ResourceQuotas
# leave room for.
#
# The API server refuses a PVC update whose larger request would take a
# quota's requests.storage (or, for the claim's class,
# <class>.storageclass.storage.k8s.io/requests.storage) past its hard limit.
# Denying first names the quota, what is used of it and its limit, before
# any claim is patched. Each claim is asked with the use at that moment:
# once some claims have grown, the quota's use says so, and the next claim
# is asked against it.
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
	growth := to - from # once, not once per quota and resource
	some quota in quotas
	not quota.scoped == true
	some resource in _quota_storage_resources
	amount := quota.resources[resource]
	object.get(amount, "usedValue", 0) + growth > amount.hardValue
	not "quota-fits" in _disabled_ids
	msg := sprintf("%s: %s → %s needs %s more %s, and ResourceQuota %s has %s used of %s", [
		claim_ref,
		_quantity_text("from", from), _quantity_text("to", to), format_bytes(growth),
		resource, quota.name,
		_quota_text(amount, "used", object.get(amount, "usedValue", 0)),
		_quota_text(amount, "hard", amount.hardValue),
	])
}

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
