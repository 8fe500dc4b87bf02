package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/claimwarden/claimwarden/config"
)

// permission is one thing an enabled feature needs from the API server, and
// the kustomize component (config/components/<component>) that grants it.
type permission struct {
	verb, group, resource, namespace string
	name                             string // one object's name, "" for any
	component                        string
}

// requiredPermissions lists, per enabled feature, one representative
// request of each rule its component grants. The core's own rules are not
// asked: without them nothing works and the first request says so.
func requiredPermissions(cfg config.Config) []permission {
	var out []permission
	// Cluster-wide roles may be bound per namespace instead: ask where the
	// controller works ("" is every namespace).
	where := cfg.Namespaces
	if len(where) == 0 {
		where = []string{""}
	}
	if cfg.HasSources() {
		for _, ns := range where {
			out = append(out,
				permission{"create", "apps", "statefulsets", ns, "", "convergence"},
				permission{"delete", "apps", "statefulsets", ns, "", "convergence"},
				permission{"list", "apps", "controllerrevisions", ns, "", "convergence"})
		}
		key := cfg.JournalKey
		out = append(out,
			permission{"get", "", "secrets", key.Namespace, key.SecretName, "convergence"},
			permission{"create", "", "secrets", key.Namespace, "", "convergence"})
	}
	if cfg.Flux.Enabled {
		fluxNS := cfg.Flux.Namespaces
		if len(fluxNS) == 0 {
			fluxNS = []string{""}
		}
		for _, ns := range fluxNS {
			out = append(out,
				permission{"watch", "kustomize.toolkit.fluxcd.io", "kustomizations", ns, "", "flux"},
				permission{"patch", "kustomize.toolkit.fluxcd.io", "kustomizations", ns, "", "flux"},
				permission{"get", "source.toolkit.fluxcd.io", "gitrepositories", ns, "", "flux"})
		}
	}
	if cfg.Flux.HelmReleases {
		fluxNS := cfg.Flux.Namespaces
		if len(fluxNS) == 0 {
			fluxNS = []string{""}
		}
		for _, ns := range fluxNS {
			out = append(out,
				permission{"watch", "helm.toolkit.fluxcd.io", "helmreleases", ns, "", "helm"},
				permission{"patch", "helm.toolkit.fluxcd.io", "helmreleases", ns, "", "helm"},
				permission{"get", "source.toolkit.fluxcd.io", "helmcharts", ns, "", "helm"})
		}
		// Release Secrets are not asked: their rule may be bound per storage
		// namespace (config/components/helm), which no start-up question can
		// know; a refused read names the Secret (SourceReady=False).
	}
	if cfg.ArgoCD.Enabled {
		argoNS := cfg.ArgoCD.Namespaces
		if len(argoNS) == 0 {
			argoNS = []string{""}
		}
		for _, ns := range argoNS {
			out = append(out, permission{"watch", "argoproj.io", "applications", ns, "", "argocd"})
		}
		out = append(out, permission{"get", "", "secrets", cfg.ArgoCD.TokenSecretRef.Namespace, cfg.ArgoCD.TokenSecretRef.Name, "argocd"},
			permission{"get", "argoproj.io", "appprojects", cfg.ArgoCD.ControlPlaneNamespace, "", "argocd"},
			permission{"get", "", "configmaps", cfg.ArgoCD.ControlPlaneNamespace, "argocd-cm", "argocd"})
	}
	if cfg.Helm.Enabled {
		for _, ns := range cfg.Helm.Namespaces {
			out = append(out, permission{"watch", "", "secrets", ns, "", "helm-cli"})
		}
	}
	if cfg.RestartForExpansion {
		for _, ns := range where {
			out = append(out,
				permission{"get", "", "pods", ns, "", "restarts"},
				permission{"create", "", "pods/eviction", ns, "", "restarts"})
		}
	}
	if cfg.PolicyReports {
		for _, ns := range where {
			out = append(out, permission{"update", "openreports.io", "reports", ns, "", "policy-reports"})
		}
	}
	for _, ns := range hostSecretNamespaces(cfg.GitStatus.Hosts) {
		out = append(out, permission{"watch", "", "secrets", ns, "", "gitstatus"})
	}
	if cfg.Autoresize.Enabled() {
		// The write credentials are watched as the status tokens are
		// (githost.NewCredentials), under a component of their own.
		for _, ns := range hostSecretNamespaces(cfg.Autoresize.Hosts) {
			out = append(out, permission{"watch", "", "secrets", ns, "", "autoresize"})
		}
	}
	return out
}

// hostSecretNamespaces are the namespaces, sorted and each once, of the
// Secrets a list of Git hosts names (tokens and GitHub App keys): where
// their credentials are watched.
func hostSecretNamespaces(hosts []config.GitHost) []string {
	var out []string
	for _, h := range hosts {
		if h.TokenSecretRef != nil {
			out = append(out, h.TokenSecretRef.Namespace)
		}
		if h.GitHubApp != nil {
			out = append(out, h.GitHubApp.PrivateKeySecretRef.Namespace)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkPermissions asks the API server (SelfSubjectAccessReviews, which
// every authenticated identity may create) whether the controller has what
// each enabled feature needs, so that a missing component is one clear error
// at start instead of rollouts failing later, one request at a time.
func checkPermissions(ctx context.Context, rc *rest.Config, cfg config.Config) error {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	var missing []string
	for _, p := range requiredPermissions(cfg) {
		// "pods/eviction" is the subresource eviction of pods.
		resource, subresource, _ := strings.Cut(p.resource, "/")
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: p.verb, Group: p.group, Resource: resource, Subresource: subresource, Namespace: p.namespace, Name: p.name},
		}}
		got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("asking the API server what the controller may do: %w", err)
		}
		if !got.Status.Allowed {
			missing = append(missing, p.describe())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the controller's RBAC lacks what its configuration enables: %s", strings.Join(missing, "; "))
	}
	return nil
}

func (p permission) describe() string {
	res := p.resource
	if p.group != "" {
		res += "." + p.group
	}
	if p.name != "" {
		res += " " + p.name
	}
	where := "in every namespace"
	if p.namespace != "" {
		where = "in namespace " + p.namespace
	}
	return fmt.Sprintf("%s %s %s (install config/components/%s)", p.verb, res, where, p.component)
}
