package rollout

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// Of a VolumeClaimRollout's updates only a person's recovery from a
// refused journal wakes the rollout: the record cleared while Stalled with
// JournalRejected. Our own writes (the record cleared after a re-create,
// any other status) do not.
func TestRolloutWatchedWakesOnlyTheJournalRecovery(t *testing.T) {
	vcr := func(pending bool, reason string) *v1alpha1.VolumeClaimRollout {
		v := &v1alpha1.VolumeClaimRollout{}
		if pending {
			v.Status.PendingRecreate = &v1alpha1.PendingRecreate{UID: "u"}
		}
		if reason != "" {
			markStalled(v, reason, "stalled")
		}
		return v
	}
	p := rolloutWatched()
	for _, c := range []struct {
		name     string
		old, new *v1alpha1.VolumeClaimRollout
		want     bool
	}{
		{"the refused record cleared", vcr(true, v1alpha1.ReasonJournalRejected), vcr(false, v1alpha1.ReasonJournalRejected), true},
		{"the record cleared after a re-create", vcr(true, ""), vcr(false, ""), false},
		{"stalled otherwise, the record cleared", vcr(true, "PolicyDenied"), vcr(false, "PolicyDenied"), false},
		{"a status write keeping the refused record", vcr(true, v1alpha1.ReasonJournalRejected), vcr(true, v1alpha1.ReasonJournalRejected), false},
		{"a status write without a record", vcr(false, ""), vcr(false, ""), false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: c.old, ObjectNew: c.new}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if !p.Create(event.CreateEvent{Object: vcr(false, "")}) || !p.Delete(event.DeleteEvent{Object: vcr(false, "")}) {
		t.Error("a creation or deletion does not wake the rollout")
	}
}
