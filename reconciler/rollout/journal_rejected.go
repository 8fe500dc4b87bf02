package rollout

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// journalRejected stalls the rollout whose status.pendingRecreate Resume
// refused, with a Warning event on the VolumeClaimRollout saying how to
// recover. The record stays: it may be a genuine one an older claimwarden
// wrote (unsealed), which a person can still act on.
func (r *Reconciler) journalRejected(ctx context.Context, key types.NamespacedName, cause error) error {
	vcr := &v1alpha1.VolumeClaimRollout{}
	if err := r.client.Get(ctx, key, vcr); err != nil {
		return client.IgnoreNotFound(err)
	}
	msg := fmt.Sprintf("%v; nothing is re-created from status.pendingRecreate of VolumeClaimRollout %s. "+
		"Check the StatefulSet it holds; if it is missing and the record is right, create it from the record, "+
		"then clear the record: kubectl patch volumeclaimrollout -n %s %s --subresource=status --type=merge "+
		`-p '{"status":{"pendingRecreate":null}}'`, cause, key, key.Namespace, key.Name)
	before := vcr.DeepCopy()
	markStalled(vcr, v1alpha1.ReasonJournalRejected, msg)
	if conditions.GetMessage(before, meta.StalledCondition) != msg {
		// Shorter than the condition: an event's note holds 1 KiB.
		r.events.Eventf(vcr, nil, v1alpha1.Source{}, corev1.EventTypeWarning, v1alpha1.ReasonJournalRejected, "Resume",
			"%v; nothing is re-created; the Stalled condition says how to recover", cause)
	}
	if err := r.writeRollout(ctx, before, vcr); err != nil {
		return fmt.Errorf("writing VolumeClaimRollout %s: %w", key, err)
	}
	return nil
}
