package argocd

import (
	"errors"
	"fmt"
	"strings"
)

// The cluster Argo CD runs in, as it names it by default
// (application_defaults.go): the only one claimwarden converges in.
const (
	inClusterServer = "https://kubernetes.default.svc"
	inClusterName   = "in-cluster"
)

// Cluster is a cluster Applications apply to that claimwarden converges
// in: its own, or a spoke the operator configured (hub and spoke).
type Cluster struct {
	// Name is claimwarden's name for it (source.Desired.Cluster); "" for
	// the cluster claimwarden runs in.
	Name string
	// Server is its API server URL and ArgoCDName its name, as Argo CD's
	// cluster Secret says them.
	Server, ArgoCDName string
}

// local is the cluster Argo CD and claimwarden run in, as Argo CD names it.
var local = Cluster{Server: inClusterServer, ArgoCDName: inClusterName}

// clusterOf resolves an Application's destination to a cluster claimwarden
// converges in, as util/argo.GetDestinationServer resolves it, except that
// a name is looked up among the configured clusters only: never in a
// cluster Secret that someone other than the operator may have written.
func (r *Applications) clusterOf(d appDestination) (Cluster, error) {
	switch {
	case d.Name != "" && d.Server != "":
		return Cluster{}, fmt.Errorf("its destination names both cluster %q and server %q, which Argo CD refuses", d.Name, d.Server)
	case d.Server != "":
		server := strings.TrimRight(d.Server, "/")
		if server == inClusterServer {
			return local, nil
		}
		for _, c := range r.clusters {
			if c.Server == server {
				return c, nil
			}
		}
		return Cluster{}, fmt.Errorf("it applies to cluster %s, which is not one claimwarden is configured for (clusters)", server)
	case d.Name == inClusterName:
		return local, nil
	case d.Name != "":
		for _, c := range r.clusters {
			if c.ArgoCDName == d.Name {
				return c, nil
			}
		}
		return Cluster{}, fmt.Errorf("it applies to cluster %q, which is not one claimwarden is configured for (clusters)", d.Name)
	}
	return Cluster{}, errors.New("its destination names no cluster")
}

// destinationPermitted mirrors AppProject.isDestinationMatched for cluster
// c (both its server and its name, as Argo CD's Cluster carries them)
// and namespace, deny patterns included: a destination matching both
// cluster and namespace permits, unless an entry denying the cluster or the
// namespace rules it out first, in list order.
func destinationPermitted(dests []projectDestination, c Cluster, namespace string) bool {
	permitted := false
	for _, item := range dests {
		nameMatched := negatableMatch(item.Name, c.ArgoCDName)
		serverMatched := negatableMatch(item.Server, c.Server)
		namespaceMatched := negatableMatch(item.Namespace, namespace)
		switch {
		case (serverMatched || nameMatched) && namespaceMatched:
			permitted = true
		// Go's precedence, as in Argo CD: a denied server counts only with
		// a matched namespace, a denied name always.
		case (!nameMatched && isDenyPattern(item.Name)) || ((!serverMatched && isDenyPattern(item.Server)) && namespaceMatched):
			return false
		case !namespaceMatched && isDenyPattern(item.Namespace) && serverMatched:
			return false
		}
	}
	return permitted
}
