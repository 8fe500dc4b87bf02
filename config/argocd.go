package config

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/claimwarden/claimwarden/integrations/argocd"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Defaults of the argocd keys.
const (
	// DefaultArgoCDServer is argocd-server's Service in a standard install.
	DefaultArgoCDServer = "https://argocd-server.argocd.svc"
	// DefaultArgoCDTokenSecret names the Secret holding the API token.
	DefaultArgoCDTokenSecret = "claimwarden-argocd"
)

// ArgoCD configures the Argo CD integration: Applications whose sync fails
// on a StatefulSet's immutable volumeClaimTemplates have that StatefulSet
// converged (Pods kept), and a sync is started again.
type ArgoCD struct {
	// Enabled watches argoproj.io/v1alpha1 Applications. The Argo CD CRDs
	// must be installed; default false.
	Enabled bool `mapstructure:"enabled"`

	// Namespaces limits the Applications watched; empty (the default)
	// watches all namespaces. Argo CD keeps Applications in its own
	// namespace unless "apps in any namespace" is enabled.
	Namespaces []string `mapstructure:"namespaces"`

	// Server is argocd-server's base URL; default
	// https://argocd-server.argocd.svc. The desired StatefulSets are read and
	// syncs started through its API.
	Server string `mapstructure:"server"`

	// TokenSecretRef names the Secret key holding the API token (an Argo CD
	// account's token with get and sync on the Applications). Default: Secret
	// "claimwarden-argocd", key "token", in the Pod's namespace. The Secret is
	// read at every use, so a rotated token applies without a restart.
	TokenSecretRef SecretKeyRef `mapstructure:"tokenSecretRef"`

	// Insecure skips the verification of the server's certificate.
	Insecure bool `mapstructure:"insecure"`

	// CAFile holds PEM certificates trusted for the server besides the
	// system's, e.g. Argo CD's self-signed CA.
	CAFile string `mapstructure:"caFile"`

	// Plaintext allows an http:// server, which sends the token unencrypted
	// (argocd-server run with --insecure behind a TLS-terminating proxy, or tests).
	Plaintext bool `mapstructure:"plaintext"`

	// SyncManualApps starts a sync of Applications without automated sync
	// once their StatefulSet was converged; by default (false) they are only
	// refreshed, and a person syncs them as before.
	SyncManualApps bool `mapstructure:"syncManualApps"`

	// ControlPlaneNamespace is Argo CD's own namespace, where its
	// AppProjects and argocd-cm are (read to decide what an Application
	// manages, and its sync impersonation); default argocd.
	ControlPlaneNamespace string `mapstructure:"controlPlaneNamespace"`
}

func defaultArgoCD(podNS string) ArgoCD {
	return ArgoCD{
		Server:                DefaultArgoCDServer,
		TokenSecretRef:        SecretKeyRef{Namespace: podNS, Name: DefaultArgoCDTokenSecret, Key: DefaultTokenKey},
		ControlPlaneNamespace: argocd.DefaultControlPlaneNamespace,
	}
}

func (a ArgoCD) validate(bad func(key string, value any, format string, args ...any)) {
	for _, ns := range a.Namespaces {
		if problems := validation.IsDNS1123Label(ns); len(problems) > 0 {
			bad("argocd.namespaces", ns, "is not a namespace name: %s", strings.Join(problems, "; "))
		}
	}
	if problems := validation.IsDNS1123Label(a.ControlPlaneNamespace); len(problems) > 0 {
		bad("argocd.controlPlaneNamespace", a.ControlPlaneNamespace, "is not a namespace name: %s", strings.Join(problems, "; "))
	}
	a.TokenSecretRef.validate("argocd.tokenSecretRef", bad)
	shown := proposal.RedactURL(a.Server)
	u, ok := httpURL("argocd.server", a.Server, bad)
	switch {
	case !ok:
	case u.User != nil:
		bad("argocd.server", shown, "holds a user name or password: the token comes from argocd.tokenSecretRef")
	case u.Scheme == "http" && !a.Plaintext:
		bad("argocd.server", shown, "is plain http, which sends the token unencrypted: set argocd.plaintext to allow it")
	case u.Scheme == "https" && a.Plaintext:
		bad("argocd.plaintext", a.Plaintext, "is set, but argocd.server %s is https", shown)
	case u.Scheme == "http" && (a.Insecure || a.CAFile != ""):
		bad("argocd.server", shown, "is plain http: argocd.insecure and argocd.caFile apply to https only")
	}
	if a.Insecure && a.CAFile != "" {
		bad("argocd.caFile", a.CAFile, "is set together with argocd.insecure, which verifies nothing: set one of them")
	}
}
