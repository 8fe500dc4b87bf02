package app

import (
	"encoding/json"
	"strings"
	"testing"
)

// Item 6a of issue 12: the controller reads the ignore and update-strategy
// annotations from the live StatefulSet; a pull request adding them does
// not change the verdict.
func TestCheckReadsAnnotationsFromTheCurrentStatefulSet(t *testing.T) {
	base := files(t, map[string]string{
		"web.yaml": statefulSet("web", 2, "10Gi", "  annotations: {claimwarden.dev/update-strategy: OnClaimDelete}\n", ""),
		"sc.yaml":  storageClass,
	})
	pr := files(t, map[string]string{"web.yaml": statefulSet("web", 2, "40Gi", "  annotations: {claimwarden.dev/ignore: \"true\", claimwarden.dev/update-strategy: InPlace}\n", "")})
	out := checkIn(t, 1, []string{`"status": "changed"`, `"verdict": "denied"`, `"strategy": "OnClaimDelete"`, "claimwarden.dev/ignore", "claimwarden.dev/update-strategy"}, "-f", pr, "--base", base, "-o", "json")
	if strings.Contains(out, `"status": "ignored"`) {
		t.Errorf("the proposal's ignore annotation made the StatefulSet ignored:\n%s", out)
	}

	// Ignored where it runs: ignored, whatever the proposal says.
	base = files(t, map[string]string{"web.yaml": statefulSet("web", 2, "10Gi", "  annotations: {claimwarden.dev/ignore: \"true\"}\n", ""), "sc.yaml": storageClass})
	pr = files(t, map[string]string{"web.yaml": statefulSet("web", 2, "40Gi", "", "")})
	checkIn(t, 0, []string{`"status": "ignored"`}, "-f", pr, "--base", base, "-o", "json")
}

// Item 6b of issue 12: a StatefulSet scaled to zero keeps its claims, which
// the controller compares with the new templates once it scales up.
func TestCheckScaledToZero(t *testing.T) {
	base := files(t, map[string]string{"web.yaml": statefulSet("web", 0, "10Gi", "", ""), "sc.yaml": storageClass})
	for _, replicas := range []int{0, 3} {
		pr := files(t, map[string]string{"web.yaml": statefulSet("web", replicas, "40Gi", "", "")})
		out := checkIn(t, 1, []string{`"verdict": "denied"`, "max-step"}, "-f", pr, "--base", base, "-o", "json")
		var r struct{ Summary struct{ Denied int } }
		if err := json.Unmarshal([]byte(strings.SplitN(strings.SplitN(out, "--- stdout\n", 2)[1], "--- stderr", 2)[0]), &r); err != nil || r.Summary.Denied == 0 {
			t.Errorf("replicas %d: %v, summary %+v: want a denied claim", replicas, err, r.Summary)
		}
	}
}
