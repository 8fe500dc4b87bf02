package diff

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// resizeError collects the expansion failures a PVC reports, so that a stuck
// claim says why instead of waiting for capacity forever.
func resizeError(st *corev1.PersistentVolumeClaimStatus) string {
	msgs := conditionMessages(st, corev1.PersistentVolumeClaimControllerResizeError, corev1.PersistentVolumeClaimNodeResizeError)
	// The status alone also means failure: resizers set it for terminal errors
	// and may have no condition message to go with it.
	switch s := st.AllocatedResourceStatuses[corev1.ResourceStorage]; s {
	case corev1.PersistentVolumeClaimControllerResizeInfeasible, corev1.PersistentVolumeClaimNodeResizeInfeasible:
		if len(msgs) == 0 {
			msgs = append(msgs, "allocatedResourceStatuses.storage is "+string(s))
		}
	}
	return strings.Join(msgs, "; ")
}

// nodeResizePending reports an expansion the storage finished that waits
// for the node to grow the file system, which many drivers do only when the
// volume is mounted again.
func nodeResizePending(st *corev1.PersistentVolumeClaimStatus) bool {
	if st.AllocatedResourceStatuses[corev1.ResourceStorage] == corev1.PersistentVolumeClaimNodeResizePending {
		return true
	}
	return len(conditionMessages(st, corev1.PersistentVolumeClaimFileSystemResizePending)) > 0
}

// modifyError collects the failures of a volume attributes class change.
func modifyError(st *corev1.PersistentVolumeClaimStatus) string {
	msgs := conditionMessages(st, corev1.PersistentVolumeClaimVolumeModifyVolumeError)
	if m := st.ModifyVolumeStatus; m != nil && m.Status == corev1.PersistentVolumeClaimModifyVolumeInfeasible && len(msgs) == 0 {
		msgs = append(msgs, "modifyVolumeStatus is Infeasible for class "+renderClass(&m.TargetVolumeAttributesClassName))
	}
	return strings.Join(msgs, "; ")
}

// conditionMessages renders the true conditions of the given types as "Type: message".
func conditionMessages(st *corev1.PersistentVolumeClaimStatus, types ...corev1.PersistentVolumeClaimConditionType) []string {
	var out []string
	for _, c := range st.Conditions {
		if c.Status != corev1.ConditionTrue || !slices.Contains(types, c.Type) {
			continue
		}
		msg := string(c.Type)
		if c.Message != "" {
			msg += ": " + c.Message
		}
		out = append(out, msg)
	}
	return out
}
