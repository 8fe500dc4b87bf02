package proposal

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// DropUnconverged forgets owner's proposals, except those in keep, whose
// templates the live StatefulSet (read through r, which should be
// uncached) does not carry: Git no longer asks for them (a revert, a newer
// revision), and a later policy change must not roll them out. A proposal
// the StatefulSet was converged to stays: it names the commit its rollout
// reports to. A StatefulSet briefly absent is being re-created by a
// convergence; its proposal stays too.
func (s *Store) DropUnconverged(ctx context.Context, r client.Reader, owner Owner, keep map[types.NamespacedName]bool) error {
	for _, key := range s.Owned(owner) {
		if keep[key] {
			continue
		}
		p, ok := s.Get(key)
		if !ok || p.StatefulSet == nil {
			continue
		}
		var live appsv1.StatefulSet
		if err := r.Get(ctx, key, &live); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading StatefulSet %s proposed by %s %s/%s: %w", key, owner.Kind, owner.Namespace, owner.Name, err)
		}
		if !diff.TemplatesEqual(live.Spec.VolumeClaimTemplates, p.StatefulSet.Spec.VolumeClaimTemplates) {
			s.Delete(ctx, owner, key)
		}
	}
	return nil
}
