# A policy quoting what a manifest says: its message carries text anyone
# proposing the change chose.
package claimwarden.claims

deny contains {"policy": "org-note", "msg": sprintf("the template's note is %s", [note])} if {
	note := input.template.metadata.annotations.note
}
