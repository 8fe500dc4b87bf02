package rollout

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/claimwarden/claimwarden/policies"
)

// A spoke must be named, not as the manager's own cluster, and the
// manager's own cluster keeps its unnamed controller.
func TestCheckClusterRefusesNamesThatCollide(t *testing.T) {
	// Never contacted: building a manager or a cluster asks no server.
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	spoke, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		cl   cluster.Cluster
		name string
		ok   bool
	}{
		{"the manager's own, unnamed", mgr, "", true},
		{"the manager's own, named", mgr, "spoke-a", false},
		{"a spoke, named", spoke, "spoke-a", true},
		{"a spoke, unnamed", spoke, "", false},
		{"a spoke named as the manager's own", spoke, inCluster, false},
		{"a spoke with too long a name", spoke, strings.Repeat("a", maxClusterName+1), false},
		{"a spoke with a newline in its name", spoke, "spoke\na", false},
		{"a spoke with a space in its name", spoke, "spoke a", false},
	} {
		if err := checkCluster(mgr, c.cl, c.name); (err == nil) != c.ok {
			t.Errorf("%s: checkCluster = %v, want ok %v", c.what, err, c.ok)
		}
	}
	_, err = SetupWithCluster(mgr, spoke, Options{Policies: noPolicies{}, JournalKeySecret: types.NamespacedName{Namespace: "ns", Name: "key"}})
	if err == nil || !strings.Contains(err.Error(), "ClusterName") {
		t.Errorf("SetupWithCluster of an unnamed spoke: %v, want an error naming Options.ClusterName", err)
	}
	if got := controllerNameOf(""); got != "volumeclaimrollout" {
		t.Errorf("the manager's own cluster's controller is %q, want volumeclaimrollout", got)
	}
	if got := controllerNameOf("spoke-a"); got != "volumeclaimrollout-spoke-a" {
		t.Errorf("spoke-a's controller is %q, want volumeclaimrollout-spoke-a", got)
	}
}

// noPolicies is an Evaluator for set-ups refused before any verdict.
type noPolicies struct{}

func (noPolicies) Evaluate(context.Context, policies.Input) policies.Verdict {
	return policies.Verdict{}
}
func (noPolicies) Revision() string { return "" }

// A spoke's controller waits for its caches as long as the spoke takes
// to answer: controller-runtime's two minutes would end the manager, and
// every other cluster's rollouts with it, for a spoke down at start-up.
func TestSyncTimeoutOfASpokeOutlastsAnOutage(t *testing.T) {
	if got := syncTimeoutOf(""); got != 0 {
		t.Errorf("the manager's own cluster waits %v, want controller-runtime's default (0)", got)
	}
	if got := syncTimeoutOf("eu"); got < 365*24*time.Hour {
		t.Errorf("a spoke's controller gives up on its caches after %v, want no bound in practice", got)
	}
}
