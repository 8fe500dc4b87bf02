package helm

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// WatchOptions configure the HelmRelease watcher.
type WatchOptions struct {
	// Namespaces limits the HelmReleases watched; empty means all.
	Namespaces []string
	// Proposals receives the proposals; required.
	Proposals *proposal.Store
	// MaxReleaseBytes bounds one release record unpacked; default
	// DefaultMaxReleaseBytes.
	MaxReleaseBytes int64
	// FieldOwner writes the nudge's annotations; default
	// v1alpha1.ControllerName.
	FieldOwner string
	// DefaultServiceAccount is helm-controller's --default-service-account:
	// the account of a HelmRelease's namespace its writes are authorised as
	// when it names none. Empty: helm-controller releases such HelmReleases
	// as itself, and claimwarden checks only that the StatefulSet is the
	// release's.
	DefaultServiceAccount string
	// NoCrossNamespaceRefs is helm-controller's --no-cross-namespace-refs:
	// provenance is not read from another namespace's objects.
	NoCrossNamespaceRefs bool
	// RetryBaseDelay and RetryMaxDelay bound the back-off while a release
	// record cannot be read; defaults 5 s and 5 min (source.Options).
	RetryBaseDelay, RetryMaxDelay time.Duration
	// Clusters are the spokes claimwarden converges in besides its own, as
	// the operator listed them, each with a reader of its release records:
	// a HelmRelease whose spec.kubeConfig names none of them is left alone.
	Clusters []toolkit.Cluster
}

func (o WatchOptions) withDefaults() WatchOptions {
	if o.FieldOwner == "" {
		o.FieldOwner = v1alpha1.ControllerName
	}
	if o.MaxReleaseBytes <= 0 {
		o.MaxReleaseBytes = DefaultMaxReleaseBytes
	}
	return o
}

// Register returns the HelmReleases tool and the options of its watcher,
// for the tool registry (source.Registry). The scheme must know
// helm.toolkit.fluxcd.io/v2, source.toolkit.fluxcd.io/v1 and
// kustomize.toolkit.fluxcd.io/v1.
func Register(mgr ctrl.Manager, o WatchOptions) (source.Registration, error) {
	o = o.withDefaults()
	if o.Proposals == nil {
		return source.Registration{}, errors.New("helm: WatchOptions.Proposals is required")
	}
	tool := &HelmReleases{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), MaxReleaseBytes: o.MaxReleaseBytes, FieldOwner: o.FieldOwner,
		DefaultServiceAccount: o.DefaultServiceAccount, NoCrossNamespaceRefs: o.NoCrossNamespaceRefs, Clusters: o.Clusters}
	return source.Registration{Tool: tool, Options: source.Options{
		Name:           "flux-helmrelease",
		Namespaces:     o.Namespaces,
		Proposals:      o.Proposals,
		RetryBaseDelay: o.RetryBaseDelay,
		RetryMaxDelay:  o.RetryMaxDelay,
	}}, nil
}

// CLIOptions configure the watcher of Helm CLI releases.
type CLIOptions struct {
	// Namespaces are the release namespaces watched; required: watching
	// release records takes list and watch on Secrets, which RBAC cannot
	// narrow to records, so it is granted namespace by namespace.
	Namespaces []string
	// Proposals receives the proposals; required.
	Proposals *proposal.Store
	// MaxReleaseBytes bounds one release record unpacked; default
	// DefaultMaxReleaseBytes.
	MaxReleaseBytes int64
	// RetryBaseDelay and RetryMaxDelay bound the back-off while a release
	// record cannot be read; defaults 5 s and 5 min (source.Options).
	RetryBaseDelay, RetryMaxDelay time.Duration
	// Recorder records the events about releases: the controller's one
	// Recorder (zero: one of the manager's).
	Recorder outcome.Recorder
}

// RegisterCLI returns the tool of Helm CLI releases and the options of its
// watcher, for the tool registry (source.Registry). The manager's cache
// must hold release records' metadata only, and only theirs
// (CacheCLIReleases).
func RegisterCLI(mgr ctrl.Manager, o CLIOptions) (source.Registration, error) {
	if o.Proposals == nil {
		return source.Registration{}, errors.New("helm: CLIOptions.Proposals is required")
	}
	if len(o.Namespaces) == 0 {
		return source.Registration{}, errors.New("helm: CLIOptions.Namespaces is required")
	}
	tool := &CLIReleases{
		Cached:          mgr.GetClient(),
		Reader:          mgr.GetAPIReader(),
		Recorder:        o.Recorder.Or(mgr),
		MaxReleaseBytes: o.MaxReleaseBytes,
	}
	return source.Registration{Tool: tool, Options: source.Options{
		Name:           "helm-release",
		Namespaces:     o.Namespaces,
		Proposals:      o.Proposals,
		RetryBaseDelay: o.RetryBaseDelay,
		RetryMaxDelay:  o.RetryMaxDelay,
		Related:        tool.Related,
		Recorder:       tool.Recorder,
	}}, nil
}

// CacheCLIReleases is the cache configuration of release records: the
// metadata of Secrets labelled owner=helm in namespaces, nothing else of
// any Secret (claimwarden reads every other Secret it needs uncached).
func CacheCLIReleases(namespaces []string) (client.Object, cache.ByObject) {
	byNS := make(map[string]cache.Config, len(namespaces))
	for _, ns := range namespaces {
		byNS[ns] = cache.Config{}
	}
	return NewReleaseSecret(), cache.ByObject{
		Namespaces: byNS,
		Label:      labels.SelectorFromSet(labels.Set{labelOwner: ownerHelm}),
	}
}
