package rollout

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/converge"
)

// TemplatesHash is templatesHash, for the tests against the API server.
var TemplatesHash = templatesHash

// NewJournal is the controller's crash journal, reading through c (the
// cache) and r (the API server), for the tests that count its reads.
func NewJournal(c client.Client, r client.Reader) converge.Journal {
	return &rolloutJournal{client: c, reader: r}
}

// ByKubernetes asks the server of cfg, as the controller does, whether
// Kubernetes updates sts's claims itself, with no reader: a read of the
// StatefulSet would panic. known and served are what it learnt of the server.
func ByKubernetes(ctx context.Context, cfg *rest.Config, sts *appsv1.StatefulSet) (byKubernetes, known, served bool, err error) {
	k := &claimUpdates{config: cfg}
	byKubernetes, err = k.byKubernetes(ctx, sts)
	return byKubernetes, k.known, k.supported, err
}

// ServerSupport asks the server of cfg, as the controller does, what it
// supports for a StatefulSet whose claims are pvcs.
func ServerSupport(ctx context.Context, cfg *rest.Config, c client.Client, pvcs []corev1.PersistentVolumeClaim) policies.Server {
	return (&serverSupport{config: cfg, client: c}).of(ctx, pvcs)
}

// RolloutWriter writes rollouts through c as the reconciles of one process do.
func RolloutWriter(c client.Client) func(ctx context.Context, before, after *v1alpha1.VolumeClaimRollout) error {
	return (&Reconciler{client: c}).writeRollout
}
