package claimwarden.claims

mock_class_change(from, to) := json.patch(mock_claim(10, 10), [{
	"op": "replace",
	"path": "/change/storageClassName",
	"value": {"from": from, "to": to},
}])

test_class_must_match_denies_another_class if {
	denials("class-must-match") == {"claim data-web-0 (StatefulSet shop/web): the template's storageClassName \"fast\" differs from the PVC's \"standard\"; a PVC's class cannot change in place, so this needs the OnClaimDelete strategy and a re-created PVC (or revert the template)"} with input as mock_class_change("standard", "fast")
}

test_class_must_match_allows_the_same_class if {
	count(deny) == 0 with input as mock_class_change("standard", "standard")
}

# The engine sends storageClassName only when the template names a class: a
# template without one accepts the class the PVC got (e.g. the default).
test_class_must_match_allows_a_template_without_class if {
	without := json.patch(mock_claim(10, 10), [{"op": "remove", "path": "/change/storageClassName"}])
	count(deny) == 0 with input as without
	count(deny) == 0 with input as object.union(mock_claim(10, 10), {"change": {"storageClassName": null}})
}

test_class_must_match_names_a_missing_class_as_none if {
	denials("class-must-match") == {"claim data-web-0 (StatefulSet shop/web): the template's storageClassName \"fast\" differs from the PVC's (none); a PVC's class cannot change in place, so this needs the OnClaimDelete strategy and a re-created PVC (or revert the template)"} with input as mock_class_change("", "fast")
}

test_class_must_match_can_be_disabled if {
	count(denials("class-must-match")) == 0 with input as mock_class_change("standard", "fast")
		with data.claimwarden.params as {"disabled": ["class-must-match"]}
}

test_class_must_match_ignores_statefulset_changes if {
	change := json.patch(mock_class_change("standard", "fast"), [{"op": "replace", "path": "/change/kind", "value": "statefulset"}])
	count(denials("class-must-match")) == 0 with input as change
}

test_class_must_match_needs_no_pvc_or_storage_class if {
	change := object.union(mock_class_change("standard", "fast"), {"pvc": null, "storageClass": null})
	count(denials("class-must-match")) == 1 with input as change
}
