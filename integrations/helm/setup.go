package helm

import (
	"errors"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
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
	// RetryBaseDelay and RetryMaxDelay bound the back-off while a release
	// record cannot be read; defaults 5 s and 5 min (source.Options).
	RetryBaseDelay, RetryMaxDelay time.Duration
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

// SetupWithManager registers the HelmRelease watcher with mgr and returns the
// Nudger the rollout controller's outcomes go to. The scheme must know
// helm.toolkit.fluxcd.io/v2, source.toolkit.fluxcd.io/v1 and
// kustomize.toolkit.fluxcd.io/v1.
func SetupWithManager(mgr ctrl.Manager, o WatchOptions) (*source.Nudger, error) {
	o = o.withDefaults()
	if o.Proposals == nil {
		return nil, errors.New("helm: WatchOptions.Proposals is required")
	}
	tool := &HelmReleases{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), MaxReleaseBytes: o.MaxReleaseBytes, FieldOwner: o.FieldOwner}
	return source.SetupWithManager(mgr, tool, source.Options{
		Name:           "flux-helmrelease",
		Namespaces:     o.Namespaces,
		Proposals:      o.Proposals,
		RetryBaseDelay: o.RetryBaseDelay,
		RetryMaxDelay:  o.RetryMaxDelay,
	})
}
