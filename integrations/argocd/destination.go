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

// destinationServer resolves an Application's destination cluster to its
// server URL as util/argo.GetDestinationServer does, except that a name
// other than in-cluster is not resolved: its server is in a cluster Secret,
// and such a cluster is not this one anyway.
func destinationServer(d appDestination) (string, error) {
	switch {
	case d.Name != "" && d.Server != "":
		return "", fmt.Errorf("its destination names both cluster %q and server %q, which Argo CD refuses", d.Name, d.Server)
	case d.Server != "":
		return strings.TrimRight(d.Server, "/"), nil
	case d.Name == inClusterName:
		return inClusterServer, nil
	case d.Name != "":
		return "", fmt.Errorf("it applies to cluster %q, not this one (%s)", d.Name, inClusterName)
	}
	return "", errors.New("its destination names no cluster")
}

// inCluster says why an Application does not apply to this cluster, or nil.
func inCluster(d appDestination) error {
	server, err := destinationServer(d)
	if err != nil {
		return err
	}
	if server != inClusterServer {
		return fmt.Errorf("it applies to cluster %s, not this one (%s)", server, inClusterServer)
	}
	return nil
}

// destinationPermitted mirrors AppProject.isDestinationMatched for this
// cluster (both its server and its name, as Argo CD's Cluster carries them)
// and namespace, deny patterns included: a destination matching both
// cluster and namespace permits, unless an entry denying the cluster or the
// namespace rules it out first, in list order.
func destinationPermitted(dests []projectDestination, namespace string) bool {
	permitted := false
	for _, item := range dests {
		nameMatched := negatableMatch(item.Name, inClusterName)
		serverMatched := negatableMatch(item.Server, inClusterServer)
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
