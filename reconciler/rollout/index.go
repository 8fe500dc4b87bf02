package rollout

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// The cache indexes that keep a reconcile's reads proportional to its
// StatefulSet instead of its namespace. A PVC carries no owner reference to
// its StatefulSet: its name, <template>-<statefulset>-<ordinal>, is the only
// link, so both indexes are built from names.
const (
	// claimStatefulSetsIndex indexes PVCs by every StatefulSet name their
	// own name could belong to (see statefulSetsNamedBy).
	claimStatefulSetsIndex = "claimwarden.dev/claim-statefulsets"
	// templateStemsIndex indexes StatefulSets by the stems of their claims
	// (see diff.SplitOrdinal).
	templateStemsIndex = "claimwarden.dev/template-stems"
)

// indexes registers the indexes on first use rather than at set-up:
// registering starts the informers, which needs the API server's discovery,
// and the controller must start (and serve its probes) while the API server
// does not answer. An informer takes indexers after it started.
type indexes struct {
	indexer client.FieldIndexer
	mu      sync.Mutex
	ready   bool
}

// ensure registers the indexes unless done; a failure is retried on the next call.
func (i *indexes) ensure(ctx context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.ready {
		return nil
	}
	if err := registerIndexes(ctx, i.indexer); err != nil {
		return fmt.Errorf("registering the claim indexes: %w", err)
	}
	i.ready = true
	return nil
}

// registerIndexes adds the indexes to the manager's cache.
func registerIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &corev1.PersistentVolumeClaim{}, claimStatefulSetsIndex, func(o client.Object) []string {
		return statefulSetsNamedBy(o.GetName())
	}); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &appsv1.StatefulSet{}, templateStemsIndex, func(o client.Object) []string {
		return templateStems(o.(*appsv1.StatefulSet))
	})
}

// statefulSetsNamedBy lists the StatefulSet names a claim's name allows:
// "a-b-web-0" may be template "a-b" of "web" or template "a" of "b-web".
// Every template is indexed, also one the StatefulSet no longer has, so that
// diff still sees the claims of removed templates.
func statefulSetsNamedBy(claim string) []string {
	stem, _, ok := diff.SplitOrdinal(claim)
	if !ok {
		return nil
	}
	var out []string
	// A '-' at either end would leave the template or the StatefulSet nameless.
	for i := 1; i < len(stem)-1; i++ {
		if stem[i] == '-' {
			out = append(out, stem[i+1:])
		}
	}
	return out
}

// templateStems are the stems of a StatefulSet's claims, one per template.
func templateStems(sts *appsv1.StatefulSet) []string {
	out := make([]string, 0, len(sts.Spec.VolumeClaimTemplates))
	for _, t := range sts.Spec.VolumeClaimTemplates {
		out = append(out, t.Name+"-"+sts.Name)
	}
	return out
}
