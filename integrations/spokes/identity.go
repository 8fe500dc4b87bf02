package spokes

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// identifyTimeout bounds the read that tells a cluster apart.
const identifyTimeout = 10 * time.Second

// Identity is what tells one cluster from another whatever URL reaches it:
// its kube-system namespace's UID, which a cluster keeps for its life (the
// convention Kubernetes' own multi-cluster work uses for a cluster ID).
func Identity(ctx context.Context, cfg *rest.Config) (types.UID, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = identifyTimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading namespace %s to tell the cluster apart: %w", metav1.NamespaceSystem, err)
	}
	return ns.UID, nil
}

// SameCluster names two of clusters (by name) that are one cluster, or
// returns "": two entries for one cluster (a private and a public URL, or
// the hub by its external URL) would give it two rollout controllers that
// race on the same objects and each patch claims.
func SameCluster(ids map[string]types.UID) (a, b string) {
	seen := map[types.UID]string{}
	for _, name := range slices.Sorted(maps.Keys(ids)) {
		id := ids[name]
		if other, ok := seen[id]; ok {
			return other, name
		}
		seen[id] = name
	}
	return "", ""
}
