package claimwarden.claims

mock_without_expansion(class) := object.union(mock_claim(10, 20), {"storageClass": class})

test_expansion_allowed_allows_an_expandable_class if {
	count(denials("expansion-allowed")) == 0 with input as mock_claim(10, 20)
}

test_expansion_allowed_denies_a_class_that_forbids_it if {
	claim := mock_without_expansion({"metadata": {"name": "standard"}, "allowVolumeExpansion": false})
	denials("expansion-allowed") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 20Gi needs StorageClass \"standard\" to set allowVolumeExpansion: true"} with input as claim
}

# Kubernetes treats a missing allowVolumeExpansion as false.
test_expansion_allowed_denies_a_class_that_does_not_say if {
	claim := json.patch(mock_claim(10, 20), [{"op": "remove", "path": "/storageClass/allowVolumeExpansion"}])
	count(denials("expansion-allowed")) == 1 with input as claim
}

# storageClass is null when the PVC's class does not exist; the API server
# would reject the resize too.
test_expansion_allowed_denies_a_missing_class if {
	denials("expansion-allowed") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 20Gi needs StorageClass \"standard\" to set allowVolumeExpansion: true, and that StorageClass was not found"} with input as mock_without_expansion(null)
}

test_expansion_allowed_denies_a_claim_without_class if {
	claim := json.patch(mock_without_expansion(null), [{"op": "replace", "path": "/pvc/spec/storageClassName", "value": ""}])
	denials("expansion-allowed") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 20Gi needs a StorageClass with allowVolumeExpansion: true, and the PVC has none (only dynamically provisioned claims can be expanded)"} with input as claim
}

test_expansion_allowed_denies_without_pvc_or_storage_class if {
	claim := object.union(mock_claim(10, 20), {"pvc": null, "storageClass": null})
	denials("expansion-allowed") == {"claim data-web-0 (StatefulSet shop/web): 10Gi → 20Gi needs a StorageClass with allowVolumeExpansion: true, and the claim's StorageClass is unknown"} with input as claim
}

test_expansion_allowed_ignores_changes_that_do_not_grow if {
	forbidding := {"metadata": {"name": "standard"}, "allowVolumeExpansion": false}
	count(deny) == 0 with input as object.union(mock_claim(10, 10), {"storageClass": forbidding})
	count(denials("expansion-allowed")) == 0 with input as object.union(mock_claim(20, 10), {"storageClass": forbidding})
}

test_expansion_allowed_can_be_disabled if {
	count(deny) == 0 with input as mock_without_expansion(null)
		with data.claimwarden.params as {"disabled": ["expansion-allowed"]}
}

test_expansion_allowed_ignores_statefulset_changes if {
	change := json.patch(mock_without_expansion(null), [{"op": "replace", "path": "/change/kind", "value": "statefulset"}])
	count(deny) == 0 with input as change
}

mock_resizing(status) := json.patch(mock_claim(10, 20), [{
	"op": "add",
	"path": "/pvc/status/conditions",
	"value": [{"type": "Resizing", "status": status}],
}])

test_expansion_allowed_warns_about_an_unfinished_expansion if {
	warnings("expansion-allowed") == {"claim data-web-0 (StatefulSet shop/web): the PVC's previous expansion has not finished (condition Resizing); growing it to 20Gi waits for that"} with input as mock_resizing("True")
	count(deny) == 0 with input as mock_resizing("True")
	count(warn) == 0 with input as mock_resizing("False")
	count(warn) == 0 with input as mock_resizing("True")
		with data.claimwarden.params as {"disabled": ["expansion-allowed"]}
}

test_expansion_allowed_tolerates_null_conditions if {
	claim := json.patch(mock_claim(10, 20), [{"op": "add", "path": "/pvc/status/conditions", "value": null}])
	count(warn) == 0 with input as claim
}
