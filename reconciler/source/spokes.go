package source

import (
	"context"
	"fmt"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// target is the cluster a tool object's desired StatefulSets are read and
// proposed in: claimwarden's own for "", else the configured spoke name.
// A name no spoke has is refused: a tool object cannot make claimwarden
// act on a cluster the operator did not list.
func (r *Reconciler) target(name string) (Spoke, error) {
	if name == "" {
		return Spoke{Reader: r.clients.Uncached, Proposals: r.store}, nil
	}
	s, ok := r.spokes[name]
	if !ok {
		return Spoke{}, fmt.Errorf("it applies to cluster %q, which is not one claimwarden is configured for (clusters)", name)
	}
	return s, nil
}

// clusters are claimwarden's own cluster ("") and the spokes.
func (r *Reconciler) clusters() map[string]Spoke {
	all := make(map[string]Spoke, len(r.spokes)+1)
	for name, s := range r.spokes {
		all[name] = s
	}
	all[""] = Spoke{Reader: r.clients.Uncached, Proposals: r.store}
	return all
}

// setSourceError marks owner's proposals in every cluster (Store.SetSourceError).
func (r *Reconciler) setSourceError(ctx context.Context, owner proposal.Owner, msg string) {
	for _, c := range r.clusters() {
		c.Proposals.SetSourceError(ctx, owner, msg)
	}
}

// dropUnconverged drops owner's proposals never converged, in every
// cluster (Store.DropUnconverged), each read with its cluster's reader.
func (r *Reconciler) dropUnconverged(ctx context.Context, owner proposal.Owner) error {
	for _, c := range r.clusters() {
		if err := c.Proposals.DropUnconverged(ctx, c.Reader, owner, nil); err != nil {
			return err
		}
	}
	return nil
}

// dropAll forgets every proposal owner made in store.
func dropAll(ctx context.Context, store *proposal.Store, owner proposal.Owner) {
	for _, key := range store.Owned(owner) {
		store.Delete(ctx, owner, key)
	}
}

// DescribeCluster names cluster (Desired.Cluster) in a message.
func DescribeCluster(name string) string {
	if name == "" {
		return "the cluster claimwarden runs in"
	}
	return "cluster " + name
}

// inCluster names the spoke name in a message; nothing for claimwarden's own.
func inCluster(name string) string {
	if name == "" {
		return ""
	}
	return " in cluster " + name
}
