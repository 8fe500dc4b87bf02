package rollout

import (
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// rolloutWatched passes a VolumeClaimRollout's creation and deletion, and
// of its updates only the one a person makes to recover from a refused
// journal: status.pendingRecreate cleared while the rollout is Stalled
// with JournalRejected. Our own status writes trigger nothing; without
// that one, a StatefulSet that already exists (Flux re-applied it) would
// wait for its next event after the documented recovery.
func rolloutWatched() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*v1alpha1.VolumeClaimRollout)
			updated, okNew := e.ObjectNew.(*v1alpha1.VolumeClaimRollout)
			return okOld && okNew && old.Status.PendingRecreate != nil && updated.Status.PendingRecreate == nil &&
				conditions.IsStalled(old) && conditions.GetReason(old, meta.StalledCondition) == v1alpha1.ReasonJournalRejected
		},
	}
}
