package rollout

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

const (
	// controllerName names the rollout controller of the manager's own
	// cluster; controller-runtime's logs and metrics carry it.
	controllerName = "volumeclaimrollout"
	// inCluster is the cluster label of the manager's own cluster: Argo
	// CD's name for the cluster it runs in.
	inCluster = "in-cluster"
	// maxClusterName bounds a spoke's name, which every log line and
	// metric series of its controller carries.
	maxClusterName = 253
	// spokeSyncTimeout is, in effect, no bound (a century; any longer and
	// a deadline would overflow): see syncTimeoutOf.
	spokeSyncTimeout = 100 * 365 * 24 * time.Hour
)

// syncTimeoutOf is how long the rollout controller of the cluster named
// name waits for its caches to sync when it starts: controller-runtime's
// default (zero: two minutes) on the manager's own cluster, without which
// there is nothing to do; a spoke's until it answers, because a controller
// whose caches time out ends the manager, and with it every other
// cluster's rollouts. A spoke unreachable when claimwarden starts holds
// up only its own.
func syncTimeoutOf(name string) time.Duration {
	if name == "" {
		return 0
	}
	return spokeSyncTimeout
}

// ClusterLabel is the value of the metrics' cluster label for a cluster
// named name ("" = the manager's own).
func ClusterLabel(name string) string {
	if name == "" {
		return inCluster
	}
	return name
}

// controllerNameOf is the rollout controller's name on the cluster named
// name: controller-runtime requires it unique in the process.
func controllerNameOf(name string) string {
	if name == "" {
		return controllerName
	}
	return controllerName + "-" + name
}

// checkCluster refuses a cluster and name that do not go together: a
// spoke without a name, or with the manager's own label, would share the
// manager's controller name or metric series; the manager's own cluster
// keeps its unnamed controller, which dashboards and logs know.
func checkCluster(mgr ctrl.Manager, cl cluster.Cluster, name string) error {
	own := cl == cluster.Cluster(mgr)
	switch {
	case own && name != "":
		return fmt.Errorf("rollout: Options.ClusterName %q given for the manager's own cluster, which is %s: leave it empty", name, inCluster)
	case own:
		return nil
	case name == "":
		return fmt.Errorf("rollout: Options.ClusterName is required for a cluster other than the manager's")
	case name == inCluster:
		return fmt.Errorf("rollout: Options.ClusterName %q is the manager's own cluster's; name the other cluster otherwise", name)
	case len(name) > maxClusterName:
		return fmt.Errorf("rollout: Options.ClusterName has %d bytes, at most %d", len(name), maxClusterName)
	case strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }):
		return fmt.Errorf("rollout: Options.ClusterName %q has a space or an unprintable character", name)
	}
	return nil
}
