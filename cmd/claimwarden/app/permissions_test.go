package app

import (
	"slices"
	"testing"

	"github.com/claimwarden/claimwarden/config"
)

// TestRequiredPermissions pins which component each enabled feature needs,
// asked where the feature works: the core alone needs none, and a feature
// turned on adds exactly its own.
func TestRequiredPermissions(t *testing.T) {
	components := func(cfg config.Config) []string {
		var out []string
		for _, p := range requiredPermissions(cfg) {
			out = append(out, p.component)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	var cfg config.Config
	cfg.JournalKey = config.JournalKey{Namespace: "cw", SecretName: "key"}
	if got := components(cfg); len(got) != 0 {
		t.Errorf("core only: needs %v, want nothing", got)
	}

	cfg.ArgoCD.Enabled = true
	cfg.ArgoCD.TokenSecretRef = config.SecretKeyRef{Namespace: "cw", Name: "argo-token", Key: "token"}
	if got, want := components(cfg), []string{"argocd", "convergence"}; !slices.Equal(got, want) {
		t.Errorf("argocd.enabled: needs %v, want %v", got, want)
	}
	perms := requiredPermissions(cfg)
	if !slices.Contains(perms, permission{"get", "", "secrets", "cw", "argo-token", "argocd"}) ||
		!slices.Contains(perms, permission{"get", "", "secrets", "cw", "key", "convergence"}) {
		t.Errorf("argocd.enabled: %v, want the token and the journal key asked for by name", perms)
	}

	cfg = config.Config{Namespaces: []string{"a", "b"}, Flux: config.Flux{Enabled: true, Namespaces: []string{"flux-system"}}}
	cfg.GitStatus.Hosts = []config.GitHost{{TokenSecretRef: &config.SecretKeyRef{Namespace: "cw", Name: "t"}}, {TokenSecretRef: &config.SecretKeyRef{Namespace: "cw", Name: "u"}}}
	perms = requiredPermissions(cfg)
	if got, want := components(cfg), []string{"convergence", "flux", "gitstatus"}; !slices.Equal(got, want) {
		t.Errorf("flux and gitStatus: needs %v, want %v", got, want)
	}
	for _, want := range []permission{
		{"create", "apps", "statefulsets", "a", "", "convergence"},
		{"create", "apps", "statefulsets", "b", "", "convergence"},
		{"list", "apps", "controllerrevisions", "b", "", "convergence"},
		{"patch", "kustomize.toolkit.fluxcd.io", "kustomizations", "flux-system", "", "flux"},
		{"watch", "", "secrets", "cw", "", "gitstatus"},
	} {
		if !slices.Contains(perms, want) {
			t.Errorf("flux and gitStatus: %v lacks %v", perms, want)
		}
	}
	if n := len(slices.DeleteFunc(slices.Clone(perms), func(p permission) bool { return p.component != "gitstatus" })); n != 1 {
		t.Errorf("two hosts with Secrets in one namespace ask %d times, want once", n)
	}

	// Autoresize's write credentials are watched where autoresize.hosts
	// names them, under their own component, and only with namespaces
	// opted in; gitStatus.hosts keeps its own.
	cfg = config.Config{Flux: config.Flux{Enabled: true}}
	cfg.GitStatus.Hosts = []config.GitHost{{TokenSecretRef: &config.SecretKeyRef{Namespace: "cw", Name: "status"}}}
	cfg.Autoresize.Hosts = []config.GitHost{
		{TokenSecretRef: &config.SecretKeyRef{Namespace: "cw", Name: "write"}},
		{GitHubApp: &config.GitHubApp{PrivateKeySecretRef: config.SecretKeyRef{Namespace: "ops", Name: "app"}}},
		{TokenSecretRef: &config.SecretKeyRef{Namespace: "ops", Name: "write"}},
	}
	if got, want := components(cfg), []string{"convergence", "flux", "gitstatus"}; !slices.Equal(got, want) {
		t.Errorf("autoresize.hosts without autoresize.namespaces: needs %v, want %v", got, want)
	}
	cfg.Autoresize.Namespaces = []config.AutoresizeNamespace{{Namespace: "shop", RepositoryPrefixes: []string{"https://github.com/team"}}}
	if got, want := components(cfg), []string{"autoresize", "convergence", "flux", "gitstatus"}; !slices.Equal(got, want) {
		t.Errorf("autoresize.namespaces: needs %v, want %v", got, want)
	}
	var autoresize []permission
	for _, p := range requiredPermissions(cfg) {
		if p.component == "autoresize" {
			autoresize = append(autoresize, p)
		}
	}
	if want := []permission{{"watch", "", "secrets", "cw", "", "autoresize"}, {"watch", "", "secrets", "ops", "", "autoresize"}}; !slices.Equal(autoresize, want) {
		t.Errorf("autoresize.hosts with Secrets in cw and ops (twice): asks %v, want %v", autoresize, want)
	}
	cfg.GitStatus.Hosts = nil
	if got, want := components(cfg), []string{"autoresize", "convergence", "flux"}; !slices.Equal(got, want) {
		t.Errorf("autoresize without gitStatus.hosts: needs %v, want %v", got, want)
	}

	cfg = config.Config{Namespaces: []string{"a"}, Flux: config.Flux{HelmReleases: true, Namespaces: []string{"apps"}}}
	if got, want := components(cfg), []string{"convergence", "helm"}; !slices.Equal(got, want) {
		t.Errorf("flux.helmReleases: needs %v, want %v", got, want)
	}
	perms = requiredPermissions(cfg)
	if !slices.Contains(perms, permission{"patch", "helm.toolkit.fluxcd.io", "helmreleases", "apps", "", "helm"}) ||
		slices.ContainsFunc(perms, func(p permission) bool { return p.component == "helm" && p.resource == "secrets" }) {
		t.Errorf("flux.helmReleases: %v, want HelmReleases patched in flux.namespaces and no Secret asked (it may be bound per storage namespace)", perms)
	}

	cfg = config.Config{Namespaces: []string{"a"}, RestartForExpansion: true}
	if got, want := components(cfg), []string{"restarts"}; !slices.Equal(got, want) {
		t.Errorf("restartForExpansion: needs %v, want %v", got, want)
	}
	if perms := requiredPermissions(cfg); !slices.Contains(perms, permission{"create", "", "pods/eviction", "a", "", "restarts"}) ||
		!slices.Contains(perms, permission{"get", "", "pods", "a", "", "restarts"}) {
		t.Errorf("restartForExpansion: %v, want Pods read and evicted where the controller works", perms)
	}
}
