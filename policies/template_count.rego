# template-count: a StatefulSet keeps its volumeClaimTemplates.
#
# claimwarden reports added and removed templates but does not act on them:
# an added template gets claims only as Pods are re-created, a removed one
# leaves its PVCs (and data) behind. Either is a migration someone should
# decide on explicitly, so by default it is denied; disable template-count to
# allow it.
package claimwarden.claims

deny contains {"policy": "template-count", "msg": msg} if {
	input.change.kind == "statefulset"
	not "template-count" in _disabled_ids
	some direction in ["added", "removed"]
	names := _template_names(direction)
	count(names) > 0
	msg := sprintf(
		"%s: volumeClaimTemplates %s (%s); adding or removing templates is a migration, not a rollout",
		[statefulset_ref, direction, concat(", ", names)],
	)
}

# _template_names is the sorted names of templates added or removed; empty
# when the field is missing or null.
_template_names("added") := _names(object.get(input, ["change", "templatesAdded"], []))

_template_names("removed") := _names(object.get(input, ["change", "templatesRemoved"], []))

_names(xs) := sort([sprintf("%v", [x]) | some x in xs]) if is_array(xs)

_names(xs) := [] if not is_array(xs)
