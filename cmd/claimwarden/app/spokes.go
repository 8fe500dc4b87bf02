package app

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/argocd"
	"github.com/claimwarden/claimwarden/integrations/spokes"
)

// spoke is a configured cluster and the controller-runtime Cluster (its
// own cache and clients) claimwarden works in it through.
type spoke struct {
	spokes.Spoke
	cluster cluster.Cluster
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
