package e2e

import (
	"fmt"
	"strings"
	"testing"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// claimwardenWrites returns the writes of resource ("persistentvolumeclaims"
// or "statefulsets") in ns that took effect and came from a claimwarden
// process, which its user agent names whatever identity it acts with (its
// own, or a proposer's it impersonates), in the order the API server
// answered them.
func claimwardenWrites(t *testing.T, resource, ns string) []auditv1.Event {
	t.Helper()
	evs, err := env.AuditEvents(func(ev *auditv1.Event) bool {
		return testenv.IsWrite(ev) && strings.HasPrefix(ev.UserAgent, "claimwarden/") &&
			ev.ObjectRef.Resource == resource && ev.ObjectRef.Namespace == ns
	})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// describeWrites renders writes for a failure message.
func describeWrites(writes []auditv1.Event) string {
	out := make([]string, len(writes))
	for i, w := range writes {
		as := w.User.Username
		if w.ImpersonatedUser != nil {
			as = w.ImpersonatedUser.Username
		}
		out[i] = fmt.Sprintf("%s %s %s as %s", w.StageTimestamp.Format("15:04:05.000"), w.Verb, w.ObjectRef.Name, as)
	}
	return "[" + strings.Join(out, "; ") + "]"
}

// assertConvergedOnce checks, in the audit log, that claimwarden's only
// writes to the StatefulSets of ns were one delete and one create of sts:
// a convergence at the floor of API writes.
func assertConvergedOnce(t *testing.T, ns, sts string) {
	t.Helper()
	writes := claimwardenWrites(t, "statefulsets", ns)
	got := map[string]int{}
	for _, w := range writes {
		got[w.Verb+" "+w.ObjectRef.Name]++
	}
	if len(got) != 2 || got["delete "+sts] != 1 || got["create "+sts] != 1 {
		t.Errorf("claimwarden wrote the StatefulSets %v, want one delete and one create of %s: %s", got, sts, describeWrites(writes))
	}
}
