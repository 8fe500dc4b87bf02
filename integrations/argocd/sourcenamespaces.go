package argocd

// appNamespacePermitted mirrors AppProject.IsAppNamespacePermitted: an
// Application in Argo CD's control-plane namespace always belongs to its
// project; one in another namespace (apps-in-any-namespace) only when the
// project lists that namespace in sourceNamespaces (globs or /regexps/).
func appNamespacePermitted(p projectSpec, appNamespace, controlPlane string) bool {
	return appNamespace == "" || appNamespace == controlPlane || matchStringInList(p.SourceNamespaces, appNamespace)
}
