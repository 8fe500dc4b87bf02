package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	promconfig "github.com/prometheus/common/config"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/autoresize"
	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/integrations/sandbox"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// autoresizeParts are what autoresize shares with the rest of the
// controller: the policies, the rollout (what it assesses proposals with,
// and its one writer of claims and status), the proposals, the GitOps
// tools, Flux's artifact cache and the Git host clients.
type autoresizeParts struct {
	engine    *policies.Engine
	rollout   *rollout.Reconciler
	writer    *rollout.Writer
	events    outcome.Recorder
	proposals *proposal.Store
	tools     *source.Registry
	artifacts *flux.Fetcher
	clients   githost.Clients
	shard     func(context.Context, types.NamespacedName) (bool, error)
}

// setupAutoresize adds the autoresize controller, with the write
// credentials of its Git hosts, when namespaces are opted in.
func setupAutoresize(mgr ctrl.Manager, cfg config.Config, parts autoresizeParts, log logr.Logger) error {
	a := cfg.Autoresize
	if !a.Enabled() {
		return nil
	}
	if parts.proposals == nil {
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
	// prometheus/common's client reads the bearer token file on each
	// request (a rotated token is used without a restart) and builds the
	// TLS configuration as Prometheus itself does.
	hc, err := promconfig.NewClientFromConfig(promconfig.HTTPClientConfig{
		BearerTokenFile: a.Prometheus.BearerTokenFile,
		TLSConfig:       promconfig.TLSConfig{CAFile: a.Prometheus.CAFile},
	}, v1alpha1.ControllerName+"-autoresize")
	if err != nil {
		return fmt.Errorf("autoresize.prometheus: %w", err)
	}
	api, err := promapi.NewClient(promapi.Config{Address: a.Prometheus.URL, Client: hc})
	if err != nil {
		return fmt.Errorf("autoresize.prometheus.url: %w", err)
	}
	// Charts are rendered by this binary started as a sandbox child
	// (sandbox.Main in main): a chart is its tenant's code.
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("autoresize: finding the binary that renders charts: %w", err)
	}
	renders := sandbox.NewRunner(self, a.Render.Limits(), a.Render.Concurrency)
	sel, err := usage.ParseSelector(a.Prometheus.SeriesSelector)
	if err != nil {
		return fmt.Errorf("autoresize.prometheus.seriesSelector: %w", err)
	}
	// Who each Git host credential is, asked once, not once per check.
	identities := &pullrequest.Identities{}
	c := &autoresize.Controller{
		Client:    mgr.GetClient(),
		Reader:    mgr.GetAPIReader(),
		Writer:    parts.writer,
		Proposals: parts.proposals,
		Usage:     usage.Reader{API: promv1.NewAPI(api), Window: a.Window, Selector: sel},
		Policies:  parts.engine,
		Rollout:   parts.rollout,
		Proposers: autoresize.BackOffHosts(func(repo githost.Repository) (pullrequest.Proposer, error) {
			h, err := creds.HostFor(repo)
			if err != nil {
				return nil, err
			}
			return pullrequest.New(h, parts.clients, identities)
		}),
		Recorder:  parts.events,
		Authority: authority.NewReviews(mgr.GetClient(), 0),
		Renderer:  gitedit.SandboxRenderer{Runner: renders},
		Tools:     parts.tools,
		Shard:     parts.shard,
		Metrics:   autoresize.NewMetrics(),
		Log:       log,
		Options: autoresize.Options{
			Rules: a.Rules(), Interval: a.Interval, Concurrency: a.Concurrency, CheckTimeout: a.CheckTimeout,
			StatusContextPrefix: cfg.GitStatus.ContextPrefix, MaxClaims: cfg.MaxClaimsPerStatefulSet,
		},
	}
	// A nil *flux.Fetcher in the interface would not be nil.
	if parts.artifacts != nil {
		c.Artifacts = parts.artifacts
	}
	// Liveness fails while autoresize's checks are wedged (on the leader):
	// a restart frees what ignores its deadline.
	if err := mgr.AddHealthzCheck("autoresize", c.Healthz); err != nil {
		return err
	}
	return mgr.Add(c)
}
