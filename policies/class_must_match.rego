# class-must-match: the template names the PVC's own StorageClass.
#
# A PVC's storageClassName is immutable, so a template asking for another
# class can never be patched in place: the claim must be re-created under the
# OnClaimDelete strategy. Denying here names the way out instead of the API
# server's generic "field is immutable".
package claimwarden.claims

deny contains {"policy": "class-must-match", "msg": msg} if {
	# Present only when the template names a class; a template without one
	# accepts whatever class the PVC was given (e.g. the cluster default).
	change := input.change.storageClassName
	not change.from == change.to # the usual case, decided before object.get
	is_object(change)
	from := object.get(change, "from", "")
	to := object.get(change, "to", "")
	from != to
	input.change.kind == "claim"
	not "class-must-match" in _disabled_ids
	msg := sprintf(
		"%s: the template's storageClassName %s differs from the PVC's %s; a PVC's class cannot change in place, so this needs the OnClaimDelete strategy and a re-created PVC (or revert the template)",
		[claim_ref, _class_text(to), _class_text(from)],
	)
}

_class_text("") := "(none)"

_class_text(name) := sprintf("%q", [name]) if name != ""
