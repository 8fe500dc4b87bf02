package app

import (
	"strings"
	"testing"
)

// Item 4 of issue 15: check says what the controller's status will say of
// a partitioned StatefulSet, whose claims below the partition wait.
func TestCheckNotesThePartition(t *testing.T) {
	partitioned := "  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate: {partition: 2}\n"
	base := files(t, map[string]string{"web.yaml": statefulSet("web", 3, "10Gi", "", partitioned), "sc.yaml": storageClass})
	pr := files(t, map[string]string{"web.yaml": statefulSet("web", 3, "20Gi", "", partitioned)})
	note := "rolling-update partition 2 holds 2 claim(s) of ordinals below 2 until it moves"
	checkIn(t, 0, []string{note, `"verdict": "allowed"`}, "-f", pr, "--base", base, "-o", "json")

	// Without a partition, nothing is held and nothing is noted.
	base = files(t, map[string]string{"web.yaml": statefulSet("web", 3, "10Gi", "", ""), "sc.yaml": storageClass})
	pr = files(t, map[string]string{"web.yaml": statefulSet("web", 3, "20Gi", "", "")})
	if out := checkIn(t, 0, nil, "-f", pr, "--base", base, "-o", "json"); strings.Contains(out, "partition") {
		t.Errorf("a StatefulSet without a partition is noted as partitioned:\n%s", out)
	}
}

// Under updateStrategy OnDelete, check says what the controller's status
// will say: every claim to patch waits for its Pod's deletion.
func TestCheckNotesOnDelete(t *testing.T) {
	onDelete := "  updateStrategy:\n    type: OnDelete\n"
	base := files(t, map[string]string{"web.yaml": statefulSet("web", 3, "10Gi", "", onDelete), "sc.yaml": storageClass})
	pr := files(t, map[string]string{"web.yaml": statefulSet("web", 3, "20Gi", "", onDelete)})
	note := "updateStrategy OnDelete holds 3 claim(s) until their Pods are deleted: web-0, web-1, web-2"
	checkIn(t, 0, []string{note, `"verdict": "allowed"`}, "-f", pr, "--base", base, "-o", "json")
}
