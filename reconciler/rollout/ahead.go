package rollout

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/gate"
)

// settings are the rollout's assessment settings.
func (r *Reconciler) settings() assess.Settings {
	return assess.Settings{MaxClaims: r.opts.MaxClaimsPerStatefulSet, MaxConcurrent: r.opts.MaxConcurrentPatches, DefaultStrategy: r.opts.Strategy}
}

// Ahead is what the rollout assesses a proposal of sts's with, for who
// asks ahead of it (autoresize, before it opens a pull request): its
// settings, the cluster's facts for src, what the API server supports of
// claims, and what the namespace's other proposals still have to grow. A
// proposal is then decided as the rollout will decide it once merged.
// Cluster.OnDelete is left out: it only orders the plan (which claims wait
// for their Pod), never a verdict, and reading it moves the rollout's
// memory of the Pods it saw.
func (r *Reconciler) Ahead(ctx context.Context, sts *appsv1.StatefulSet, src policies.Source, claims []corev1.PersistentVolumeClaim) (assess.Settings, assess.Cluster) {
	c := r.cluster(ctx, sts.Namespace, src, claims)
	c.InFlight = r.reserved.others(client.ObjectKeyFromObject(sts))
	return r.settings(), c
}

// cluster is what every assessment of the rollout reads of the cluster
// for a proposal of namespace ns from src with claims; the rollout adds
// OnDelete, and InFlight as it decides (reservations.decide).
func (r *Reconciler) cluster(ctx context.Context, ns string, src policies.Source, claims []corev1.PersistentVolumeClaim) assess.Cluster {
	return assess.Cluster{Facts: gate.ClusterFacts(r.client, ns, src), Server: r.server.of(ctx, claims)}
}
