package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/argocd"
	"github.com/claimwarden/claimwarden/integrations/spokes"
	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// spokeProbeInterval is how often each spoke's API server is asked whether
// it answers (spokes.Probe).
const spokeProbeInterval = 30 * time.Second

// spoke is a configured cluster and the controller-runtime Cluster (its
// own cache and clients) claimwarden works in it through.
type spoke struct {
	spokes.Spoke
	cluster cluster.Cluster
	// options are its rollout's (setupClusters), rollout the controller
	// (setupRollouts).
	options rollout.Options
	rollout *rollout.Reconciler
}

// newSpokes reads the credentials of the configured clusters and adds a
// cluster.Cluster for each to mgr, which starts its cache with the
// manager's; none without clusters configured.
func newSpokes(ctx context.Context, mgr ctrl.Manager, cfg config.Config) ([]spoke, error) {
	if len(cfg.Clusters) == 0 {
		return nil, nil
	}
	set, err := spokes.Load(ctx, mgr.GetAPIReader(), cfg.SpokeRefs(), map[spokes.Type]spokes.Parser{
		spokes.TypeArgoCD:     spokes.ArgoCDParser(argocd.ClusterSecret),
		spokes.TypeKubeconfig: spokes.KubeconfigParser,
	})
	if err != nil {
		return nil, err
	}
	if err := distinctClusters(ctx, mgr, set.All()); err != nil {
		return nil, err
	}
	var out []spoke
	for _, s := range set.All() {
		restConfig := rest.CopyConfig(s.Config)
		restConfig.UserAgent = mgr.GetConfig().UserAgent
		restConfig.QPS, restConfig.Burst = mgr.GetConfig().QPS, mgr.GetConfig().Burst
		cl, err := cluster.New(restConfig, func(o *cluster.Options) {
			o.Scheme = mgr.GetScheme()
			o.Cache = spokeCacheOptions(cfg.Namespaces)
		})
		if err != nil {
			return nil, fmt.Errorf("cluster %s (%s): %w", s.Name, s.Server, err)
		}
		if err := mgr.Add(cl); err != nil {
			return nil, err
		}
		if err := mgr.Add(&spokes.Probe{Spoke: s, Interval: spokeProbeInterval, Log: mgr.GetLogger().WithName("spokes")}); err != nil {
			return nil, err
		}
		out = append(out, spoke{Spoke: s, cluster: cl})
	}
	return out, nil
}

// spokeCacheOptions cache on a spoke what the rollout reads there, as the
// manager's cache does on the hub: the configured namespaces only, without
// managed fields. No tool object is on a spoke.
func spokeCacheOptions(namespaces []string) cache.Options {
	o := cache.Options{DefaultTransform: cache.TransformStripManagedFields()}
	if len(namespaces) > 0 {
		o.DefaultNamespaces = namespaceConfigs(namespaces)
	}
	return o
}

// argoCDClusters are the spokes as the Argo CD tool matches destinations.
func argoCDClusters(ss []spoke) []argocd.Cluster {
	out := make([]argocd.Cluster, 0, len(ss))
	for _, s := range ss {
		out = append(out, argocd.Cluster{Name: s.Name, Server: s.Server, ArgoCDName: s.ArgoCDName})
	}
	return out
}

// spokeRolloutOptions are the rollout options of spoke s: those of
// claimwarden's own cluster (hub) with everything that reads or writes
// the cluster made s's: its store, the authority's reviews (asked on the
// spoke, where the tool applies as its identity), its Writer, its events
// (recorded where the objects are, one recorder the spoke's rollout and
// autoresize share) and its own policy-change signal. Its sinks are shared (the
// sinks every cluster's outcomes go to); its commit-status sink and
// nudgers are added by the caller.
func spokeRolloutOptions(cfg config.Config, hub rollout.Options, s spoke, policyChanges <-chan struct{}, shared []outcome.Sink) rollout.Options {
	o := hub
	o.ClusterName = s.Name
	o.PolicyChanges = policyChanges
	o.Writer = rollout.NewWriter(s.cluster.GetClient(), s.cluster.GetAPIReader())
	o.Recorder = outcome.NewRecorder(s.cluster.GetEventRecorder(v1alpha1.ControllerName))
	o.Sinks = slices.Clone(shared)
	o.Proposals, o.Authority = nil, nil
	if cfg.HasSources() {
		o.Proposals = proposal.NewStore()
		o.Authority = authority.NewReviews(s.cluster.GetClient(), 0)
	}
	return o
}

// fanOut copies each signal of in to n channels, each coalescing as in
// does (one pending signal is enough), until ctx ends: every cluster's
// rollout evaluates again after a policy change. A channel per reader
// because a signal received by one is gone for the others.
func fanOut(ctx context.Context, in <-chan struct{}, n int) []<-chan struct{} {
	outs := make([]chan struct{}, n)
	ro := make([]<-chan struct{}, n)
	for i := range outs {
		outs[i] = make(chan struct{}, 1)
		ro[i] = outs[i]
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-in:
			}
			for _, out := range outs {
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return ro
}

// sumOf is the sum of fs' values; nil for none.
func sumOf(fs []func() int) func() int {
	if len(fs) == 0 {
		return nil
	}
	return func() int {
		total := 0
		for _, f := range fs {
			total += f()
		}
		return total
	}
}

// toolkitClusters are the spokes as Flux's tools match a kubeConfig, each
// read uncached with the operator's credential.
func toolkitClusters(ss []spoke) []toolkit.Cluster {
	out := make([]toolkit.Cluster, 0, len(ss))
	for _, s := range ss {
		out = append(out, toolkit.Cluster{Name: s.Name, Server: s.Server, CAData: s.CAData, Reader: s.cluster.GetAPIReader()})
	}
	return out
}

// distinctClusters refuses two listed spokes, or a spoke and the hub, that
// are one cluster reached by two URLs (spokes.Identity). A spoke that does
// not answer now cannot be told apart: it is logged and started, as one
// down at start-up must not stop the others.
func distinctClusters(ctx context.Context, mgr ctrl.Manager, ss []spokes.Spoke) error {
	ids := map[string]types.UID{}
	hub, err := spokes.Identity(ctx, mgr.GetConfig())
	if err != nil {
		return err
	}
	ids[spokes.InClusterName] = hub
	for _, s := range ss {
		id, err := spokes.Identity(ctx, s.Config)
		if err != nil {
			mgr.GetLogger().Error(err, "a listed cluster does not answer: it is not told apart from the others until claimwarden restarts", "cluster", s.Name, "server", s.Server)
			continue
		}
		ids[s.Name] = id
	}
	if a, b := spokes.SameCluster(ids); a != "" {
		return fmt.Errorf("clusters: %s and %s are one cluster (the same kube-system namespace UID): list each cluster once", a, b)
	}
	return nil
}

// sourceSpokes are the spokes as the tools' watchers propose to them: each
// one's reader and store (none without sources).
func sourceSpokes(ss []spoke) source.Spokes {
	out := source.Spokes{}
	for _, s := range ss {
		if s.options.Proposals != nil {
			out[s.Name] = source.Spoke{Reader: s.cluster.GetAPIReader(), Proposals: s.options.Proposals}
		}
	}
	return out
}
