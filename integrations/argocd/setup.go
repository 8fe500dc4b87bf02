package argocd

import (
	"errors"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// WatchOptions configure the Application watcher.
type WatchOptions struct {
	// Namespaces limits the Applications watched; empty means all. Argo CD
	// keeps them in its own namespace unless apps-in-any-namespace is on.
	Namespaces []string
	// API reads desired StatefulSets and starts syncs; required.
	API *Client
	// Proposals receives the proposals; required.
	Proposals *proposal.Store
	// SyncManualApps starts a sync of Applications without automated sync
	// after a convergence; by default they are only refreshed.
	SyncManualApps bool
	// ControlPlaneNamespace is Argo CD's own namespace, holding its
	// AppProjects and argocd-cm; default DefaultControlPlaneNamespace.
	ControlPlaneNamespace string
	// RetryBaseDelay and RetryMaxDelay bound the back-off while the Argo CD
	// API fails; defaults 5 s and 5 min (source.Options).
	RetryBaseDelay, RetryMaxDelay time.Duration
	// Recorder records the events about Applications: the controller's
	// one Recorder (zero: one of the manager's).
	Recorder outcome.Recorder
	// Clusters are the spokes claimwarden converges in besides its own,
	// as the operator configured them: an Application whose destination
	// is none of them, nor this cluster, is left alone.
	Clusters []Cluster
}

// Register returns the Applications tool and the options of its watcher,
// for the tool registry (source.Registry).
func Register(mgr ctrl.Manager, o WatchOptions) (source.Registration, error) {
	if o.API == nil || o.Proposals == nil {
		return source.Registration{}, errors.New("argocd: WatchOptions.API and Proposals are required")
	}
	if o.ControlPlaneNamespace == "" {
		o.ControlPlaneNamespace = DefaultControlPlaneNamespace
	}
	rec := o.Recorder.Or(mgr)
	tool := NewApplications(mgr.GetAPIReader(), o.API, rec, o.SyncManualApps, o.ControlPlaneNamespace)
	tool.clusters = o.Clusters
	return source.Registration{Tool: tool, Options: source.Options{
		Name:           "argocd-application",
		Namespaces:     o.Namespaces,
		Proposals:      o.Proposals,
		RetryBaseDelay: o.RetryBaseDelay,
		RetryMaxDelay:  o.RetryMaxDelay,
		Recorder:       rec,
	}}, nil
}
