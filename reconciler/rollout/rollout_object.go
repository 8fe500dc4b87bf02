package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// rolloutFor returns the StatefulSet's VolumeClaimRollout, creating it when missing.
func (r *Reconciler) rolloutFor(ctx context.Context, sts *appsv1.StatefulSet) (*v1alpha1.VolumeClaimRollout, error) {
	vcr := &v1alpha1.VolumeClaimRollout{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(sts), vcr)
	if err == nil || !apierrors.IsNotFound(err) {
		return vcr, err
	}
	vcr = &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: sts.Namespace, Name: sts.Name}}
	if err := controllerutil.SetOwnerReference(sts, vcr, r.client.Scheme()); err != nil {
		return nil, err
	}
	if err := r.client.Create(ctx, vcr, client.FieldOwner(v1alpha1.ControllerName)); err != nil {
		return nil, fmt.Errorf("creating VolumeClaimRollout %s/%s: %w", sts.Namespace, sts.Name, err)
	}
	return vcr, nil
}

// adopt points the rollout's owner reference at the current StatefulSet: an
// orphan delete (ours or a user's) strips it, and a re-created StatefulSet has a new UID.
func (r *Reconciler) adopt(sts *appsv1.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) error {
	refs := vcr.OwnerReferences[:0]
	for _, ref := range vcr.OwnerReferences {
		if ref.Kind != "StatefulSet" || ref.UID == sts.UID {
			refs = append(refs, ref)
		}
	}
	vcr.OwnerReferences = refs
	return controllerutil.SetOwnerReference(sts, vcr, r.client.Scheme())
}

// writeRollout writes what the reconcile changed: metadata (the owner
// reference) and the status, each only when it differs, the status in ONE
// merge patch. fluxcd/pkg/runtime's patch helper writes conditions and the
// rest of the status in two requests, so watchers (kstatus readers such as
// Flux health checks among them) would briefly see Ready=True beside the
// previous claims; every condition here is ours, so nothing is lost by
// patching them together.
//
// Our own claim patch triggers the next reconcile, often before the cache
// has seen the rollout written with it: a part that our last write (mine)
// already holds is not written again onto the copy the cache still serves.
// The patches stay based on before, never on the API server's answer: that
// would undo what the journal wrote in between.
//
// status.autoresize is the Writer's (RecordAutoresize): a reconcile never
// changes it, so a patch made from before never names it, and a write of it
// made since is kept whatever the cache served.
func (r *Reconciler) writeRollout(ctx context.Context, before, after *v1alpha1.VolumeClaimRollout) error {
	key := client.ObjectKeyFromObject(after)
	mine, ahead := r.memory.ownWriteAhead(key, before.ResourceVersion)
	if !equality.Semantic.DeepEqual(before.ObjectMeta, after.ObjectMeta) &&
		!(ahead && equality.Semantic.DeepEqual(mine.owners, after.OwnerReferences)) {
		// Each patch carries only its part: the base of the metadata patch
		// has our status, that of the status patch the server's metadata.
		base := before.DeepCopy()
		base.Status = after.Status
		status := after.Status.DeepCopy()
		if err := r.client.Patch(ctx, after, client.MergeFrom(base), client.FieldOwner(v1alpha1.ControllerName)); err != nil {
			return err
		}
		// The answer holds the server's status, newer than the cache's.
		mine, ahead = ownWrite{version: after.ResourceVersion, owners: after.OwnerReferences, sum: statusSum(after.Status)}, true
		r.memory.wroteRollout(key, mine)
		after.Status = *status
		before = before.DeepCopy()
		before.ObjectMeta = *after.ObjectMeta.DeepCopy()
	}
	if equality.Semantic.DeepEqual(before.Status, after.Status) || heldProgress(&before.Status, &after.Status) {
		return nil
	}
	sum := statusSum(after.Status)
	if ahead && mine.sum == sum {
		return nil
	}
	if err := r.client.Status().Patch(ctx, after, client.MergeFrom(before), client.FieldOwner(v1alpha1.ControllerName)); err != nil {
		return err
	}
	r.memory.wroteRollout(key, ownWrite{version: after.ResourceVersion, owners: after.OwnerReferences, sum: sum})
	return nil
}

// statusSum identifies a status; encoding/json sorts map keys, so it is
// stable. Condition transition times are left out: fluxcd/pkg/runtime's
// conditions.Set stamps the current second on every message change, so two
// reconciles on the same cached base a second apart compute the same status
// with other times, and the second write would say nothing new.
func statusSum(st v1alpha1.VolumeClaimRolloutStatus) [sha256.Size]byte {
	st.Conditions = slices.Clone(st.Conditions)
	for i := range st.Conditions {
		st.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	b, err := json.Marshal(st)
	if err != nil {
		// Never equal to a remembered sum: the status is written.
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(b)
}
