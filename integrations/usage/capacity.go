package usage

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// How far the kubelet's capacity (the file system's size, statfs) may be
// from the claim's status.capacity (the volume's size) and still be this
// volume's:
//   - above: a file system is never larger than its volume; 2% leaves room
//     for a volume the driver rounded up a little beyond what it reports.
//   - below: a file system's own structures are not in its size (ext4's
//     inode tables and journal take about 5% of a 1Gi volume and more of
//     smaller ones, XFS's log up to 64Mi), so 20%. A resize of more than
//     that is reported below it until the kubelet's next statistics of the
//     grown file system (a minute or so): no decision meanwhile, and none
//     would be taken right after a resize anyway (smaller resizes stay
//     within it, the fullness then being of status.capacity).
const (
	capacityAbove = 0.02
	capacityBelow = 0.20
)

// Against is why u cannot be decided on for a claim whose status.capacity
// is statusBytes: its Problem, a capacity that is not this volume's, or
// more used than the capacity; "" when it can.
func (u Usage) Against(statusBytes int64) string {
	switch c, s := float64(u.CapacityBytes), float64(statusBytes); {
	case u.Problem != "":
		return u.Problem
	case c > s*(1+capacityAbove):
		return fmt.Sprintf("the kubelet's series report a capacity of %s, above the claim's status.capacity %s by more than %.0f%%: not this volume's",
			quantity(u.CapacityBytes), quantity(statusBytes), 100*capacityAbove)
	case c < s*(1-capacityBelow):
		return fmt.Sprintf("the kubelet's series report a capacity of %s, below the claim's status.capacity %s by more than %.0f%%: a file system the kubelet has not reported grown yet, or not this volume's",
			quantity(u.CapacityBytes), quantity(statusBytes), 100*capacityBelow)
	case u.UsedBytes > u.CapacityBytes:
		return fmt.Sprintf("the kubelet's series report more used than their capacity of %s", quantity(u.CapacityBytes))
	}
	return ""
}

func quantity(bytes int64) string { return resource.NewQuantity(bytes, resource.BinarySI).String() }
