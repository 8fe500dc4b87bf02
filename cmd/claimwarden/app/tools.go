package app

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/argocd"
	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/integrations/helm"
	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// newTools is the registry of the GitOps tools configured, built once: the
// source reconcilers watch them (Registry.SetupWithManager) and autoresize asks them
// which tool object applies a StatefulSet and where Git holds it. A tool
// is one registration here.
func newTools(mgr ctrl.Manager, cfg config.Config, store *proposal.Store, artifacts *flux.Fetcher, events outcome.Recorder, spokeList []spoke) (*source.Registry, error) {
	tools := &source.Registry{Recorder: events}
	// Flux's two tools are both asked about StatefulSets at rest when
	// either is enabled (a Kustomization applies HelmReleases from Git),
	// and each is watched when configured.
	if cfg.Flux.Enabled || cfg.Flux.HelmReleases {
		ks, err := flux.Register(mgr, fluxOptions(mgr, cfg.Flux, store, artifacts, toolkitClusters(spokeList)))
		if err != nil {
			return nil, fmt.Errorf("setting up the Flux integration: %w", err)
		}
		hr, err := helm.Register(mgr, helmOptions(cfg.Flux, store, toolkitClusters(spokeList)))
		if err != nil {
			return nil, fmt.Errorf("setting up the Flux HelmRelease integration: %w", err)
		}
		watchOrKnow(tools, ks, cfg.Flux.Enabled)
		watchOrKnow(tools, hr, cfg.Flux.HelmReleases)
	}
	if cfg.ArgoCD.Enabled {
		apps, err := registerArgoCD(mgr, cfg.ArgoCD, store, events, argoCDClusters(spokeList))
		if err != nil {
			return nil, err
		}
		tools.Watch(apps)
	}
	if cfg.Helm.Enabled {
		releases, err := helm.RegisterCLI(mgr, cliOptions(cfg.Helm, store, events))
		if err != nil {
			return nil, fmt.Errorf("setting up the Helm release integration: %w", err)
		}
		tools.Watch(releases)
	}
	return tools, nil
}

// watchOrKnow adds reg's tool to tools, watched or only asked about.
func watchOrKnow(tools *source.Registry, reg source.Registration, watched bool) {
	if watched {
		tools.Watch(reg)
	} else {
		tools.Know(reg.Tool)
	}
}

// fluxOptions configure the Kustomizations tool.
func fluxOptions(mgr ctrl.Manager, f config.Flux, store *proposal.Store, artifacts *flux.Fetcher, clusters []toolkit.Cluster) flux.WatchOptions {
	return flux.WatchOptions{
		Namespaces: f.Namespaces,
		Builder: &flux.Builder{
			Fetcher: artifacts,
			// Uncached: substituteFrom names a few ConfigMaps and Secrets; a
			// cache would watch every Secret in the cluster.
			Reader: mgr.GetAPIReader(),
			Limits: flux.Limits{TotalBytes: f.MaxBuildBytes, Nodes: f.MaxBuildNodes},
		},
		Proposals:             store,
		FieldOwner:            v1alpha1.ControllerName,
		DefaultServiceAccount: f.DefaultServiceAccount,
		NoCrossNamespaceRefs:  f.NoCrossNamespaceRefs,
		Clusters:              clusters,
	}
}

// helmOptions configure the HelmReleases tool (flux.helmReleases).
func helmOptions(f config.Flux, store *proposal.Store, clusters []toolkit.Cluster) helm.WatchOptions {
	return helm.WatchOptions{
		Namespaces:            f.Namespaces,
		Proposals:             store,
		MaxReleaseBytes:       f.MaxReleaseBytes,
		FieldOwner:            v1alpha1.ControllerName,
		DefaultServiceAccount: f.DefaultServiceAccount,
		NoCrossNamespaceRefs:  f.NoCrossNamespaceRefs,
		Clusters:              clusters,
	}
}

// cliOptions configure the tool of plain Helm releases.
func cliOptions(h config.Helm, store *proposal.Store, events outcome.Recorder) helm.CLIOptions {
	return helm.CLIOptions{Namespaces: h.Namespaces, Proposals: store, MaxReleaseBytes: h.MaxReleaseBytes, Recorder: events}
}

// registerArgoCD makes the Applications tool with its argocd-server client.
func registerArgoCD(mgr ctrl.Manager, a config.ArgoCD, store *proposal.Store, events outcome.Recorder, clusters []argocd.Cluster) (source.Registration, error) {
	if a.CAFile != "" {
		if _, err := os.Stat(a.CAFile); err != nil {
			return source.Registration{}, fmt.Errorf("argocd.caFile: %w", err)
		}
	}
	ref := a.TokenSecretRef
	api, err := argocd.NewClient(argocd.ClientOptions{
		Server: a.Server, CAFile: a.CAFile, Insecure: a.Insecure, Plaintext: a.Plaintext,
		// Uncached: one Secret read per API call; a cache would watch Secrets.
		Token: &argocd.SecretToken{Reader: mgr.GetAPIReader(), Secret: types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, Key: ref.Key},
	})
	if err != nil {
		return source.Registration{}, fmt.Errorf("argocd: %w", err)
	}
	reg, err := argocd.Register(mgr, argocd.WatchOptions{
		Namespaces:     a.Namespaces,
		API:            api,
		Proposals:      store,
		SyncManualApps: a.SyncManualApps,
		Recorder:       events,
		Clusters:       clusters,
		// AppProjects and argocd-cm decide what an Application manages.
		ControlPlaneNamespace: a.ControlPlaneNamespace,
	})
	if err != nil {
		return source.Registration{}, fmt.Errorf("setting up the Argo CD integration: %w", err)
	}
	return reg, nil
}
