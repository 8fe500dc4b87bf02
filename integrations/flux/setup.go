package flux

import (
	"errors"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// WatchOptions configure the Kustomization watcher.
type WatchOptions struct {
	// Namespaces limits the Kustomizations watched; empty means all.
	Namespaces []string
	// Builder fetches and builds artifacts; required.
	Builder ArtifactBuilder
	// Proposals receives the proposals; required.
	Proposals *proposal.Store
	// FieldOwner writes the reconcile request annotation; default
	// v1alpha1.ControllerName.
	FieldOwner string
	// DefaultServiceAccount is kustomize-controller's
	// --default-service-account: the account of a Kustomization's namespace
	// its writes are authorised as when it names none. Empty: Flux applies
	// such Kustomizations as itself, and claimwarden checks only that the
	// StatefulSet is in the Kustomization's inventory.
	DefaultServiceAccount string
	// NoCrossNamespaceRefs is kustomize-controller's
	// --no-cross-namespace-refs: a Kustomization whose source is in
	// another namespace is not read.
	NoCrossNamespaceRefs bool
	// RetryBaseDelay and RetryMaxDelay bound the back-off while a source
	// cannot be fetched or built; defaults 5 s and 5 min (source.Options).
	RetryBaseDelay, RetryMaxDelay time.Duration
	// Clusters are the spokes claimwarden converges in besides its own, as
	// the operator listed them: a Kustomization whose spec.kubeConfig names
	// none of them is left alone.
	Clusters []toolkit.Cluster
}

func (o WatchOptions) withDefaults() WatchOptions {
	if o.FieldOwner == "" {
		o.FieldOwner = v1alpha1.ControllerName
	}
	return o
}

// Register returns the Kustomizations tool and the options of its
// watcher, for the tool registry (source.Registry). The scheme must know
// kustomize.toolkit.fluxcd.io/v1 and source.toolkit.fluxcd.io/v1.
func Register(mgr ctrl.Manager, o WatchOptions) (source.Registration, error) {
	o = o.withDefaults()
	if o.Builder == nil || o.Proposals == nil {
		return source.Registration{}, errors.New("flux: WatchOptions.Builder and Proposals are required")
	}
	tool := &Kustomizations{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Builder: o.Builder, FieldOwner: o.FieldOwner,
		DefaultServiceAccount: o.DefaultServiceAccount, NoCrossNamespaceRefs: o.NoCrossNamespaceRefs, Clusters: o.Clusters}
	return source.Registration{Tool: tool, Options: source.Options{
		Name:           "flux-kustomization",
		Namespaces:     o.Namespaces,
		Proposals:      o.Proposals,
		RetryBaseDelay: o.RetryBaseDelay,
		RetryMaxDelay:  o.RetryMaxDelay,
	}}, nil
}
