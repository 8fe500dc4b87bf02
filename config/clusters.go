package config

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/claimwarden/claimwarden/integrations/spokes"
)

// Cluster is a spoke: a cluster besides claimwarden's own whose
// StatefulSets it converges, reached with the credential the GitOps tool
// holds for it (docs/architecture.md, many clusters). Only the operator
// lists one: a cluster is never taken from a Secret a tenant can write.
type Cluster struct {
	// Name is claimwarden's name for the cluster, in metrics labels and
	// logs: a DNS-1123 label, unique, not "in-cluster" (the cluster
	// claimwarden runs in). Required.
	Name string `mapstructure:"name"`

	// Type is the format of the Secret: ArgoCD (the default), an Argo CD
	// cluster Secret (labelled argocd.argoproj.io/secret-type: cluster,
	// keys server, name and config), or Kubeconfig, a kubeconfig at
	// secretRef.key.
	Type spokes.Type `mapstructure:"type"`

	// SecretRef names the Secret holding the credential. Required.
	SecretRef ClusterSecretRef `mapstructure:"secretRef"`
}

// ClusterSecretRef names the Secret of a cluster; it is read once, at
// start-up, through the API server (not watched).
type ClusterSecretRef struct {
	// Namespace of the Secret. Default: argocd.controlPlaneNamespace for
	// type ArgoCD (Argo CD reads its cluster Secrets there only), the
	// Pod's namespace for type Kubeconfig.
	Namespace string `mapstructure:"namespace"`

	// Name of the Secret. Required.
	Name string `mapstructure:"name"`

	// Key holding the kubeconfig, type Kubeconfig only; default "value",
	// as Flux's kubeConfig.secretRef reads it.
	Key string `mapstructure:"key"`
}

// clusterTypes are the values of Cluster.Type, in the order error messages list them.
var clusterTypes = func() []string {
	var out []string
	for _, t := range spokes.Types() {
		out = append(out, string(t))
	}
	return out
}()

// fillClusterDefaults sets the defaults inside clusters, which Default
// cannot hold: decoding makes every list entry from zero. podNS and argoNS
// are the Pod's and Argo CD's namespaces.
func fillClusterDefaults(clusters []Cluster, podNS, argoNS string) {
	for i := range clusters {
		c := &clusters[i]
		if c.Type == "" {
			c.Type = spokes.TypeArgoCD
		}
		if c.SecretRef.Namespace == "" {
			c.SecretRef.Namespace = podNS
			if c.Type == spokes.TypeArgoCD {
				c.SecretRef.Namespace = argoNS
			}
		}
		if c.SecretRef.Key == "" && c.Type == spokes.TypeKubeconfig {
			c.SecretRef.Key = spokes.DefaultKubeconfigKey
		}
	}
}

// validateClusters reports the invalid entries of clusters through bad.
func validateClusters(clusters []Cluster, bad func(key string, value any, format string, args ...any)) {
	firstWithName := map[string]int{}
	firstWithSecret := map[ClusterSecretRef]int{}
	for i, c := range clusters {
		key := func(field string) string { return fmt.Sprintf("clusters[%d].%s", i, field) }

		if c.Name == "" {
			bad(key("name"), c.Name, "is empty: name the cluster (metrics and logs say it)")
		} else if problems := validation.IsDNS1123Label(c.Name); len(problems) > 0 {
			bad(key("name"), c.Name, "is not a DNS-1123 label: %s", strings.Join(problems, "; "))
		} else if c.Name == spokes.InClusterName {
			bad(key("name"), c.Name, "is the name of the cluster claimwarden runs in")
		} else if j, ok := firstWithName[c.Name]; ok {
			bad(key("name"), c.Name, "is also the name of clusters[%d]", j)
		} else {
			firstWithName[c.Name] = i
		}

		if !slices.Contains(clusterTypes, string(c.Type)) {
			bad(key("type"), c.Type, "is not one of %s", strings.Join(clusterTypes, ", "))
		}

		ref := c.SecretRef
		if problems := validation.IsDNS1123Label(ref.Namespace); len(problems) > 0 {
			bad(key("secretRef.namespace"), ref.Namespace, "is not a namespace name: %s", strings.Join(problems, "; "))
		}
		if problems := validation.IsDNS1123Subdomain(ref.Name); len(problems) > 0 {
			bad(key("secretRef.name"), ref.Name, "is not a Secret name: %s", strings.Join(problems, "; "))
		}
		switch c.Type {
		case spokes.TypeArgoCD:
			if ref.Key != "" {
				bad(key("secretRef.key"), ref.Key, "is set, but an Argo CD cluster Secret's keys are server, name and config: leave it out or set type Kubeconfig")
			}
		case spokes.TypeKubeconfig:
			if problems := validation.IsConfigMapKey(ref.Key); len(problems) > 0 {
				bad(key("secretRef.key"), ref.Key, "is not a Secret key: %s", strings.Join(problems, "; "))
			}
		}
		// One credential listed twice would be two names for one server,
		// which the spokes refuse only once the Secret is read.
		if j, ok := firstWithSecret[ref]; ok {
			bad(key("secretRef"), types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, "is also the Secret of clusters[%d]", j)
		} else {
			firstWithSecret[ref] = i
		}
	}
}

// SpokeRefs are the clusters as spokes.Load takes them, in the order listed.
func (c Config) SpokeRefs() []spokes.Ref {
	out := make([]spokes.Ref, len(c.Clusters))
	for i, cl := range c.Clusters {
		out[i] = spokes.Ref{
			Name:   cl.Name,
			Type:   cl.Type,
			Secret: types.NamespacedName{Namespace: cl.SecretRef.Namespace, Name: cl.SecretRef.Name},
			Key:    cl.SecretRef.Key,
		}
	}
	return out
}

// validateClusterUsage reports, with clusters listed and autoresize on,
// what would mix clusters' usage: no cluster label, whose values tell the
// clusters' series apart, or a spoke named as the label names
// claimwarden's own cluster.
func (c Config) validateClusterUsage(bad func(key string, value any, format string, args ...any)) {
	p := c.Autoresize.Prometheus
	if !c.Autoresize.Enabled() || len(c.Clusters) == 0 {
		return
	}
	if p.ClusterLabel == "" {
		bad("autoresize.prometheus.clusterLabel", "", "is empty: with clusters listed, autoresize reads each cluster's usage from its own series, which this label tells apart")
		return
	}
	for i, cl := range c.Clusters {
		if cl.Name == p.ClusterLabelValue {
			bad(fmt.Sprintf("clusters[%d].name", i), cl.Name, "is autoresize.prometheus.clusterLabelValue, the %s of the series of the cluster claimwarden runs in: name them apart", p.ClusterLabel)
		}
	}
}
