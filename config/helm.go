package config

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/claimwarden/claimwarden/integrations/helm"
)

// Helm configures the integration with plain Helm, no GitOps tool: a
// `helm upgrade` (from CI, say) that failed on immutable
// volumeClaimTemplates leaves a failed release record; its StatefulSets are
// converged, and the next `helm upgrade` succeeds. Releases made by Flux's
// helm-controller are flux.helmReleases'.
type Helm struct {
	// Enabled watches the release records (Secrets of type
	// helm.sh/release.v1, Helm's default storage) in Namespaces; default
	// false.
	Enabled bool `mapstructure:"enabled"`

	// Namespaces are the release namespaces watched; required when Enabled.
	// Watching release records needs list and watch on Secrets there, which
	// RBAC cannot narrow to release records: grant it namespace by
	// namespace (the chart does, from this list).
	Namespaces []string `mapstructure:"namespaces"`

	// MaxReleaseBytes bounds one release record unpacked; default 16 MiB.
	MaxReleaseBytes int64 `mapstructure:"maxReleaseBytes"`
}

func defaultHelm() Helm {
	return Helm{MaxReleaseBytes: helm.DefaultMaxReleaseBytes}
}

func (h Helm) validate(bad func(key string, value any, format string, args ...any)) {
	if h.MaxReleaseBytes <= 0 {
		bad("helm.maxReleaseBytes", h.MaxReleaseBytes, "is not a positive number of bytes")
	}
	if h.Enabled && len(h.Namespaces) == 0 {
		bad("helm.namespaces", h.Namespaces, "is empty: name the release namespaces to watch (claimwarden lists Secrets there, so it is never cluster-wide)")
	}
	for _, ns := range h.Namespaces {
		if problems := validation.IsDNS1123Label(ns); len(problems) > 0 {
			bad("helm.namespaces", ns, "is not a namespace name: %s", strings.Join(problems, "; "))
		}
	}
}
