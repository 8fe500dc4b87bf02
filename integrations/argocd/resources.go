package argocd

import "path"

// statefulSetKind is the group and kind every candidate has.
var statefulSetKind = groupKind{Group: "apps", Kind: "StatefulSet"}

// namespacedKindPermitted mirrors AppProject.IsGroupKindNamePermitted for a
// namespaced kind: an unset whitelist permits every kind, a set but empty
// one none; a blacklist match refuses.
func namespacedKindPermitted(p projectSpec, gk groupKind) bool {
	whitelisted := p.NamespaceResourceWhitelist == nil || kindInList(gk, p.NamespaceResourceWhitelist)
	return whitelisted && !kindInList(gk, p.NamespaceResourceBlacklist)
}

// kindInList mirrors isResourceInList: shell patterns (filepath.Match, the
// same as path.Match for names without separators) on kind and group.
func kindInList(gk groupKind, list []groupKind) bool {
	for _, item := range list {
		kindOK, err := path.Match(item.Kind, gk.Kind)
		if err != nil || !kindOK {
			continue
		}
		if groupOK, err := path.Match(item.Group, gk.Group); err == nil && groupOK {
			return true
		}
	}
	return false
}
