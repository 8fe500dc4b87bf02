// Package argoenv runs a real Argo CD (v3.6.1, built by `make testenv`) against a
// testenv control plane, for tests of how claimwarden meets Argo CD: Redis,
// argocd-repo-server, argocd-application-controller and argocd-server, all on
// 127.0.0.1, outside the cluster, with the in-cluster destination
// (https://kubernetes.default.svc) pointing at the testenv API server.
//
//	env := testenv.StartT(t, testenv.Options{Kwok: true})
//	argo := argoenv.StartT(t, env)
//	app := argo.Application(argoenv.AppSpec{Name: "shop", RepoURL: url, DestNamespace: "shop", Automated: true})
//	_ = c.Create(ctx, app)
//	_, err := argo.WaitApp(ctx, c, argo.Namespace, "shop", argoenv.SyncStatus("Synced"))
//
// The three Argo CD programs are one binary (bin/testenv/argocd) that picks its role
// from ARGOCD_BINARY_NAME. Start installs what an Argo CD installation keeps in the
// cluster: the CRDs, argocd-cm, argocd-rbac-cm and argocd-secret with an admin
// password; argocd-server adds its signing key and the default AppProject itself.
//
// Options.ApplicationNamespaces turns on "applications in any namespace": Start
// passes --application-namespaces to argocd-server and the controller (out of
// cluster they read flags, not argocd-cmd-params-cm) and creates the default
// AppProject itself, with those namespaces as spec.sourceNamespaces; AppSpec.Namespace
// then puts an Application there, and API calls for it carry ?appNamespace=.
//
// AppSpec.HelmValues makes an Application's Git directory a Helm chart: the
// repo-server renders it with the helm binary tools.sh links beside argocd
// (Helm v3.22.0), which Start puts first on the repo-server's PATH.
//
// Argo CD caches resolved revisions for minutes: a test that pushes a commit asks
// for a hard refresh (HardRefresh) to have it seen at once.
package argoenv
