package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/policyreport"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// setupControllers builds the policy engine and registers claimwarden's
// controllers with mgr, in phases: the policies; the clusters (this one
// and the spokes) and what each cluster's rollout reports to; the GitOps
// tools, which propose to every cluster; the rollouts; autoresize. The
// engine stops when ctx ends.
func setupControllers(ctx context.Context, mgr ctrl.Manager, cfg config.Config, log logr.Logger) error {
	engine, err := newPolicyEngine(ctx, cfg.Policies, log.WithName("policies"))
	if err != nil {
		return err
	}
	if cfg.Policies.ConfigMaps {
		if err := engine.SetupConfigMapSource(mgr, cfg.Policies.ConfigMapNamespace); err != nil {
			return fmt.Errorf("policy ConfigMaps in %s: %w", cfg.Policies.ConfigMapNamespace, err)
		}
	}
	// One installation token per GitHub App, shared by every client built
	// from it: the commit statuses' and autoresize's pull requests'; and
	// one Pacer, so that a host's rate limit on a token holds back both;
	// one Conditional: a GET answered 304 costs GitHub's rate limit nothing.
	clients := githost.Clients{Apps: &githost.AppTransports{}, Pacer: &githost.Pacer{}, Conditional: githost.NewConditional()}
	hub, spokeList, err := setupClusters(ctx, mgr, cfg, engine, clients, log)
	if err != nil {
		return err
	}
	// One artifact cache: the Kustomization builds' and autoresize's charts
	// from Helm repositories share its directory and bound.
	var artifacts *flux.Fetcher
	if cfg.Flux.Enabled || cfg.Flux.HelmReleases {
		f := cfg.Flux
		artifacts = &flux.Fetcher{Dir: f.ArtifactCacheDir, MaxSize: f.MaxArtifactSize, MaxCacheSize: f.MaxCacheSize, Logger: log.WithName("flux")}
	}
	tools, err := newTools(mgr, cfg, hub.Proposals, artifacts, hub.Recorder, spokeList)
	if err != nil {
		return err
	}
	tools.Spokes = sourceSpokes(spokeList)
	tools.Select = toolSelect(cfg.Sharding)
	hub.Shard = newShard(cfg.Sharding, tools, hub.Proposals, mgr.GetClient(), mgr.GetClient(), "")
	roll, err := setupRollouts(mgr, cfg, tools, hub, spokeList)
	if err != nil {
		return err
	}
	clusters := []autoresizeCluster{{client: mgr.GetClient(), options: hub, rollout: roll}}
	for _, s := range spokeList {
		clusters = append(clusters, autoresizeCluster{name: s.Name, client: s.cluster.GetClient(), options: s.options, rollout: s.rollout})
	}
	return setupAutoresize(mgr, cfg, autoresizeParts{
		engine: engine, clusters: clusters, tools: tools, artifacts: artifacts, clients: clients,
	}, log.WithName("autoresize"))
}

// setupClusters returns the rollout options of this cluster (hub) and the
// spokes, each spoke's its own (spokeRolloutOptions): every cluster's
// writer, store, reviews, commit-status sink and policy-change signal;
// sinks that take every cluster's outcomes (the Flux notifier) go to all.
func setupClusters(ctx context.Context, mgr ctrl.Manager, cfg config.Config, engine *policies.Engine, clients githost.Clients, log logr.Logger) (rollout.Options, []spoke, error) {
	selector, err := cfg.Selector()
	if err != nil {
		return rollout.Options{}, nil, err
	}
	creds, err := newGitCredentials(mgr, cfg.GitStatus)
	if err != nil {
		return rollout.Options{}, nil, err
	}
	spokeList, err := newSpokes(ctx, mgr, cfg)
	if err != nil {
		return rollout.Options{}, nil, err
	}
	policyChanges := fanOut(ctx, engine.Changes(), len(spokeList)+1)
	hub := rolloutOptions(cfg, selector, engine)
	hub.PolicyChanges = policyChanges[0]
	// One writer of claim sizes and VolumeClaimRollout status per cluster:
	// the rollout's, through which the commit-status sink records what it
	// posted and autoresize grows claims and writes its status.
	hub.Writer = rollout.NewWriter(mgr.GetClient(), mgr.GetAPIReader())
	// One event recorder: every controller's events about an object share
	// its budget (outcome.NewRecorder).
	hub.Recorder = outcome.NewRecorder(mgr.GetEventRecorder(v1alpha1.ControllerName))
	if cfg.HasSources() {
		// One store per cluster: a StatefulSet's newest proposal wins,
		// whichever tool made it.
		hub.Proposals = proposal.NewStore()
		// A proposal's writes are checked as its tool's service account
		// (reconciler/authority says why by review, not impersonation).
		hub.Authority = authority.NewReviews(mgr.GetClient(), 0)
	}
	// Sinks every cluster's outcomes go to.
	var shared []outcome.Sink
	if addr := cfg.GitStatus.FluxEventsAddr; addr != "" {
		notifier, err := newFluxNotifier(ctx, addr, log.WithName("flux-events"))
		if err != nil {
			return rollout.Options{}, nil, err
		}
		shared = append(shared, notifier)
	}
	var pending []func() int
	addStatuses := func(o *rollout.Options, cluster string, log logr.Logger) error {
		sink, err := newCommitStatusSink(mgr, cfg.GitStatus, creds, clients, o.Writer, cluster, log)
		if sink != nil {
			// A nil *CommitStatusSink in the interface would not be nil.
			o.Sinks = append(o.Sinks, sink)
			pending = append(pending, sink.Pending)
		}
		return err
	}
	if err := addStatuses(&hub, "", log.WithName("gitstatus")); err != nil {
		return rollout.Options{}, nil, err
	}
	hub.Sinks = append(hub.Sinks, shared...)
	if cfg.PolicyReports {
		if err := addPolicyReports(mgr, &hub, log.WithName("policyreport")); err != nil {
			return rollout.Options{}, nil, err
		}
	}
	for i := range spokeList {
		s := &spokeList[i]
		s.options = spokeRolloutOptions(cfg, hub, *s, policyChanges[i+1], shared)
		if err := addStatuses(&s.options, s.Name, log.WithName("gitstatus").WithValues("cluster", s.Name)); err != nil {
			return rollout.Options{}, nil, err
		}
	}
	exportHealth(engine, sumOf(pending))
	return hub, spokeList, nil
}

// setupRollouts registers the rollout controller of this cluster (hub)
// and of each spoke, each reporting to its cluster's Nudgers, a spoke's
// leaving another shard's StatefulSets alone as hub.Shard does here, and
// returns this cluster's; each spoke's is kept in spokeList.
func setupRollouts(mgr ctrl.Manager, cfg config.Config, tools *source.Registry, hub rollout.Options, spokeList []spoke) (*rollout.Reconciler, error) {
	// The tools' Nudgers ask them to apply again once a proposal converged,
	// each cluster's rollout its own.
	nudgers, err := tools.SetupWithManager(mgr)
	if err != nil {
		return nil, err
	}
	for _, n := range nudgers[""] {
		hub.Sinks = append(hub.Sinks, n)
	}
	roll, err := rollout.SetupWithManager(mgr, hub)
	if err != nil {
		return nil, fmt.Errorf("setting up the rollout controller: %w", err)
	}
	for i := range spokeList {
		s := &spokeList[i]
		s.options.Shard = newShard(cfg.Sharding, tools, s.options.Proposals, mgr.GetClient(), s.cluster.GetClient(), s.Name)
		for _, n := range nudgers[s.Name] {
			s.options.Sinks = append(s.options.Sinks, n)
		}
		if s.rollout, err = rollout.SetupWithCluster(mgr, s.cluster, s.options); err != nil {
			return nil, fmt.Errorf("setting up the rollout controller of cluster %s: %w", s.Name, err)
		}
	}
	return roll, nil
}

// rolloutOptions maps the configuration onto the rollout controller's
// options; sinks, proposals and authority are added as they are set up.
func rolloutOptions(cfg config.Config, selector labels.Selector, engine *policies.Engine) rollout.Options {
	return rollout.Options{
		Namespaces:              cfg.Namespaces,
		LabelSelector:           selector,
		Strategy:                cfg.UpdateStrategy,
		MaxConcurrentPatches:    cfg.MaxConcurrentPatches,
		RestartForExpansion:     cfg.RestartForExpansion,
		MaxClaimsPerStatefulSet: cfg.MaxClaimsPerStatefulSet,
		Workers:                 cfg.Workers,
		Policies:                engine,
		PolicyChanges:           engine.Changes(),
		JournalKeySecret:        types.NamespacedName{Namespace: cfg.JournalKey.Namespace, Name: cfg.JournalKey.SecretName},
		WorkloadAnnotations:     workloadAnnotations(cfg.GitStatus.WorkloadAnnotations),
	}
}

// newFluxNotifier builds the sink that sends outcomes to Flux's
// notification-controller at addr, flushed when ctx ends.
func newFluxNotifier(ctx context.Context, addr string, log logr.Logger) (*flux.Notifier, error) {
	notifier, err := flux.NewNotifier(addr, v1alpha1.ControllerName, log)
	if err != nil {
		return nil, fmt.Errorf("gitStatus.fluxEventsAddr: %w", err)
	}
	go func() {
		<-ctx.Done()
		// Deliver what is queued before the process exits.
		flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = notifier.Flush(flushCtx)
	}()
	return notifier, nil
}

// newPolicyEngine builds the engine from the policies.* configuration; it
// stops when ctx ends.
func newPolicyEngine(ctx context.Context, p config.Policies, log logr.Logger) (*policies.Engine, error) {
	opts, err := policyOptions(p, log)
	if err != nil {
		return nil, err
	}
	engine, err := policies.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("policies: %w", err)
	}
	go func() {
		<-ctx.Done()
		engine.Stop()
	}()
	return engine, nil
}

// policyOptions maps the policies.* configuration onto the engine's options.
func policyOptions(p config.Policies, log logr.Logger) (policies.Options, error) {
	bundles := make([]policies.BundleSource, 0, len(p.Bundles))
	for i, b := range p.Bundles {
		src := policies.BundleSource{
			Name: b.Name, URL: b.URL, PollMin: b.PollMin, PollMax: b.PollMax,
			TokenFile: b.TokenFile, CACertFile: b.CACertFile,
			KeyID: b.KeyID, Algorithm: b.Algorithm, Scope: b.Scope,
			SizeLimitBytes: b.SizeLimitBytes, TotalSizeLimitBytes: b.TotalSizeLimitBytes,
			DownloadTimeout: b.DownloadTimeout, Trigger: b.Trigger,
		}
		if b.PublicKeyFile != "" {
			key, err := os.ReadFile(b.PublicKeyFile)
			if err != nil {
				return policies.Options{}, fmt.Errorf("policies.bundles[%d].publicKeyFile: %w", i, err)
			}
			src.PublicKey = string(key)
		}
		bundles = append(bundles, src)
	}
	return policies.Options{
		Dirs:              p.Dirs,
		PollInterval:      p.PollInterval,
		Bundles:           bundles,
		Params:            p.Params,
		Timeout:           p.Timeout,
		ValueLimitBytes:   p.ValueLimitBytes,
		MemoryBudgetBytes: p.MemoryBudgetBytes,
		AllowNetwork:      p.AllowNetworkBuiltins,
		DecisionLogs:      p.DecisionLogs,
		DecisionLogMask:   p.DecisionLogMask,
		Logger:            log,
	}, nil
}

// newGitCredentials builds the Secret-backed credentials of the configured
// Git hosts and adds them to mgr; nil when no Git host is configured.
func newGitCredentials(mgr ctrl.Manager, g config.GitStatus) (*githost.Credentials, error) {
	if len(g.Hosts) == 0 {
		return nil, nil
	}
	creds, err := githost.NewCredentials(mgr.GetConfig(), mgr.GetScheme(), hostConfigs(g.Hosts))
	if err != nil {
		return nil, fmt.Errorf("gitStatus.hosts: %w", err)
	}
	return creds, mgr.Add(creds)
}

// newCommitStatusSink builds the commit-status sink of one cluster ("" is
// claimwarden's own; a spoke's statuses name it after the prefix, so
// that one commit's StatefulSets of the same name in two clusters are two
// statuses), recording what it posted through records, and adds it to
// mgr; nil when no Git host is configured (creds nil).
func newCommitStatusSink(mgr ctrl.Manager, g config.GitStatus, creds *githost.Credentials, clients githost.Clients, records commitstatus.Records, cluster string, log logr.Logger) (*commitstatus.CommitStatusSink, error) {
	if creds == nil {
		return nil, nil
	}
	sink := commitstatus.NewCommitStatusSink(commitstatus.CommitStatusSinkOptions{
		Reporter:      commitstatus.ReporterOptions{Providers: commitstatus.NewProviders(creds, clients).ProviderFor, Logger: log},
		Records:       records,
		ContextPrefix: commitstatus.ClusterPrefix(g.ContextPrefix, cluster),
		TargetURL:     g.TargetURL,
		Logger:        log,
	})
	return sink, mgr.Add(sink)
}

// hostConfigs are configured Git hosts as githost.Credentials reads them.
func hostConfigs(hosts []config.GitHost) []githost.HostConfig {
	out := make([]githost.HostConfig, 0, len(hosts))
	for _, h := range hosts {
		hc := githost.HostConfig{URL: h.URL, Type: githost.HostType(h.Type)}
		if h.TokenSecretRef != nil {
			hc.Token = &githost.SecretRef{Namespace: h.TokenSecretRef.Namespace, Name: h.TokenSecretRef.Name, Key: h.TokenSecretRef.Key}
		}
		if h.GitHubApp != nil {
			ref := h.GitHubApp.PrivateKeySecretRef
			hc.App = &githost.AppConfig{
				AppID: h.GitHubApp.AppID, InstallationID: h.GitHubApp.InstallationID,
				PrivateKey: githost.SecretRef{Namespace: ref.Namespace, Name: ref.Name, Key: ref.Key},
			}
		}
		out = append(out, hc)
	}
	return out
}

// addPolicyReports adds the sink of the OpenReports Reports to the hub's
// rollout, where the API server serves them; a cluster without the CRDs
// gets none (said once): the reports are where Policy Reporter looks, not
// a place of claimwarden's own.
func addPolicyReports(mgr ctrl.Manager, hub *rollout.Options, log logr.Logger) error {
	if !policyreport.Installed(mgr.GetRESTMapper()) {
		log.Info("policyReports is on, but the API server serves no reports.openreports.io: no policy reports are written (install the OpenReports CRDs and restart)")
		return nil
	}
	sink := policyreport.New(mgr.GetClient(), mgr.GetAPIReader(), log)
	hub.Sinks = append(hub.Sinks, sink)
	return mgr.Add(sink)
}
