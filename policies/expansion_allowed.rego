# expansion-allowed: a claim grows only if its StorageClass allows expansion.
#
# The API server rejects a larger request unless the PVC's StorageClass exists
# and sets allowVolumeExpansion: true (admission plugin
# PersistentVolumeClaimResize). Denying first names the class and what to set,
# and keeps the rollout from stalling on a rejected patch.
package claimwarden.claims

deny contains {"policy": "expansion-allowed", "msg": msg} if {
	not input.storageClass.allowVolumeExpansion == true
	[from, to] := _claim_sizes
	to > from
	not "expansion-allowed" in _disabled_ids
	msg := sprintf("%s: %s → %s %s", [claim_ref, _quantity_text("from", from), _quantity_text("to", to), _expansion_blocker])
}

# An expansion the storage is still working on is not an error, but a second
# one queues behind it, which explains a claim staying in Resizing.
warn contains {"policy": "expansion-allowed", "msg": msg} if {
	# Undefined (no warning) when the PVC, its status or conditions are missing.
	some condition in input.pvc.status.conditions
	condition.type in {"Resizing", "FileSystemResizePending"}
	condition.status == "True"
	[from, to] := _claim_sizes
	to > from
	not "expansion-allowed" in _disabled_ids
	msg := sprintf(
		"%s: the PVC's previous expansion has not finished (condition %s); growing it to %s waits for that",
		[claim_ref, condition.type, _quantity_text("to", to)],
	)
}

# Why the class does not allow expansion. storageClass is null both when the
# PVC names no class and when the named class does not exist.
_expansion_blocker := sprintf("needs StorageClass %q to set allowVolumeExpansion: true", [name]) if {
	is_object(input.storageClass)
	name := object.get(input.storageClass, ["metadata", "name"], _pvc_class_name)
} else := sprintf("needs StorageClass %q to set allowVolumeExpansion: true, and that StorageClass was not found", [_pvc_class_name]) if {
	_pvc_class_name != "?"
} else := "needs a StorageClass with allowVolumeExpansion: true, and the PVC has none (only dynamically provisioned claims can be expanded)" if {
	is_object(input.pvc)
} else := "needs a StorageClass with allowVolumeExpansion: true, and the claim's StorageClass is unknown"

_pvc_class_name := name if {
	name := input.pvc.spec.storageClassName
	is_string(name)
	name != ""
} else := "?"
