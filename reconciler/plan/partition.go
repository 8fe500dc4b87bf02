package plan

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// Partition is a StatefulSet's rolling-update partition. KEP-4650 updates a
// claim when the StatefulSet controller would update its Pod, and that
// controller updates only the Pods at index Partition and above (the index
// is the ordinal minus spec.ordinals.start): a partitioned StatefulSet is a
// canary for volume changes too.
type Partition struct {
	// Partition is the first index that is updated; 0 holds nothing.
	Partition int32
	// Start is spec.ordinals.start, the ordinal of index 0.
	Start int32
}

// PartitionOf reads the partition of sts. Like the update-strategy
// annotation, the controller reads it from the live StatefulSet, so moving
// it is how a person lets the held claims proceed.
func PartitionOf(sts *appsv1.StatefulSet) Partition {
	var p Partition
	if o := sts.Spec.Ordinals; o != nil {
		p.Start = o.Start
	}
	s := sts.Spec.UpdateStrategy
	if (s.Type == "" || s.Type == appsv1.RollingUpdateStatefulSetStrategyType) && s.RollingUpdate != nil && s.RollingUpdate.Partition != nil {
		p.Partition = max(*s.RollingUpdate.Partition, 0)
	}
	return p
}

// holds says whether the claim of ordinal waits for the partition to move.
func (p Partition) holds(ordinal int32) bool {
	return int64(ordinal)-int64(p.Start) < int64(p.Partition)
}

// firstUpdated is the lowest ordinal the partition lets through.
func (p Partition) firstUpdated() int64 { return int64(p.Start) + int64(p.Partition) }

func (p Partition) waitingMessage(c string) string {
	return fmt.Sprintf("waiting: the StatefulSet's rolling-update partition %d holds ordinals below %d until it moves; will patch %s", p.Partition, p.firstUpdated(), c)
}

func (p Partition) heldSummary(held int) string {
	return fmt.Sprintf("rolling-update partition %d holds %d claim(s) of ordinals below %d until it moves", p.Partition, held, p.firstUpdated())
}

// HeldNote says which claims of r the partition holds, as the controller's
// status will, or "" when it holds none: what `claimwarden check` notes.
func (p Partition) HeldNote(r diff.Result) string {
	held := 0
	for _, c := range r.Claims {
		if !c.Compatible && !c.Missing && len(c.Immutable) == 0 && blockingFailure(c) == "" && c.NeedsPatch() && p.holds(c.Ordinal) {
			held++
		}
	}
	if held == 0 {
		return ""
	}
	return p.heldSummary(held)
}
