package app

import (
	"errors"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	promconfig "github.com/prometheus/common/config"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/autoresize"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/integrations/sandbox"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// autoresizeParts are what autoresize shares with the rest of the
// controller: the policies, each cluster's rollout, the GitOps tools,
// Flux's artifact cache and the Git host clients.
type autoresizeParts struct {
	engine    *policies.Engine
	clusters  []autoresizeCluster
	tools     *source.Registry
	artifacts *flux.Fetcher
	clients   githost.Clients
}

// autoresizeCluster is one cluster as autoresize checks it: its cache, its
// rollout (what it assesses proposals with) and the rollout's options (its
// one writer of claims and status, its store, its reviews, its event
// recorder and its shard); name "" is claimwarden's own.
type autoresizeCluster struct {
	name    string
	client  client.Client
	rollout *rollout.Reconciler
	options rollout.Options
}

// setupAutoresize adds an autoresize controller per cluster, sharing the
// write credentials of the Git hosts, their back-off, the Prometheus API
// and the chart renderer, when namespaces are opted in.
func setupAutoresize(mgr ctrl.Manager, cfg config.Config, parts autoresizeParts, log logr.Logger) error {
	a := cfg.Autoresize
	if !a.Enabled() {
		return nil
	}
	if !cfg.HasSources() {
		return errors.New("autoresize proposes pull requests to the repositories GitOps tools apply from: enable flux, flux.helmReleases or argocd")
	}
	creds, err := githost.NewCredentials(mgr.GetConfig(), mgr.GetScheme(), hostConfigs(a.Hosts))
	if err != nil {
		return fmt.Errorf("autoresize.hosts: %w", err)
	}
	creds.ConfigKey = "autoresize.hosts"
	if err := mgr.Add(creds); err != nil {
		return err
	}
	prom, err := prometheusAPI(a.Prometheus)
	if err != nil {
		return err
	}
	// Charts are rendered by this binary started as a sandbox child
	// (sandbox.Main in main): a chart is its tenant's code.
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("autoresize: finding the binary that renders charts: %w", err)
	}
	renders := sandbox.NewRunner(self, a.Render.Limits(), a.Render.Concurrency)
	// Who each Git host credential is, asked once, not once per check; a
	// host that fails is backed off for every cluster's checks.
	identities := &pullrequest.Identities{}
	proposers := autoresize.BackOffHosts(func(repo githost.Repository) (pullrequest.Proposer, error) {
		h, err := creds.HostFor(repo)
		if err != nil {
			return nil, err
		}
		return pullrequest.New(h, parts.clients, identities)
	})
	for _, cl := range parts.clusters {
		sel, err := a.Prometheus.Selector(cl.name)
		if err != nil {
			return fmt.Errorf("autoresize.prometheus.seriesSelector: %w", err)
		}
		c := &autoresize.Controller{
			Client:    cl.client,
			Reader:    parts.tools.WatchedReader(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme()),
			Writer:    cl.options.Writer,
			Proposals: cl.options.Proposals,
			Usage:     usage.Reader{API: prom, Window: a.Window, Selector: sel},
			Policies:  parts.engine,
			Rollout:   cl.rollout,
			Proposers: proposers,
			Recorder:  cl.options.Recorder,
			Authority: cl.options.Authority,
			Renderer:  gitedit.SandboxRenderer{Runner: renders},
			Tools:     parts.tools,
			Shard:     cl.options.Shard,
			Metrics:   autoresize.NewMetrics(cl.name),
			Log:       log.WithValues("cluster", rollout.ClusterLabel(cl.name)),
			Options: autoresize.Options{
				Rules: a.Rules(), Interval: a.Interval, Concurrency: a.Concurrency, CheckTimeout: a.CheckTimeout,
				StatusContextPrefix: commitstatus.ClusterPrefix(cfg.GitStatus.ContextPrefix, cl.name),
				MaxClaims:           cfg.MaxClaimsPerStatefulSet, Cluster: cl.name,
			},
		}
		// A nil *flux.Fetcher in the interface would not be nil.
		if parts.artifacts != nil {
			c.Artifacts = parts.artifacts
		}
		// Liveness fails while a cluster's autoresize checks are wedged
		// (on the leader): a restart frees what ignores its deadline.
		check := "autoresize"
		if cl.name != "" {
			check += "-" + cl.name
		}
		if err := mgr.AddHealthzCheck(check, c.Healthz); err != nil {
			return err
		}
		if err := mgr.Add(c); err != nil {
			return err
		}
	}
	return nil
}

// prometheusAPI is the Prometheus HTTP API of p. prometheus/common's
// client reads the bearer token file on each request (a rotated token is
// used without a restart) and builds the TLS configuration as Prometheus
// itself does.
func prometheusAPI(p config.Prometheus) (promv1.API, error) {
	hc, err := promconfig.NewClientFromConfig(promconfig.HTTPClientConfig{
		BearerTokenFile: p.BearerTokenFile,
		TLSConfig:       promconfig.TLSConfig{CAFile: p.CAFile},
	}, v1alpha1.ControllerName+"-autoresize")
	if err != nil {
		return nil, fmt.Errorf("autoresize.prometheus: %w", err)
	}
	api, err := promapi.NewClient(promapi.Config{Address: p.URL, Client: hc})
	if err != nil {
		return nil, fmt.Errorf("autoresize.prometheus.url: %w", err)
	}
	return promv1.NewAPI(api), nil
}
