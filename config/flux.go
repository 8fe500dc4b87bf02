package config

import (
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/integrations/helm"
)

// Flux configures the Flux integration: Kustomizations whose newest revision
// Flux could not apply are built like kustomize-controller builds them, and
// StatefulSets whose volumeClaimTemplates changed are converged.
type Flux struct {
	// Enabled watches kustomize.toolkit.fluxcd.io/v1 Kustomizations. The
	// Flux CRDs must be installed; default false.
	Enabled bool `mapstructure:"enabled"`

	// Namespaces limits the Kustomizations watched; empty (the default)
	// watches all namespaces. Independent of namespaces, which limits the
	// StatefulSets: Kustomizations usually live in flux-system.
	Namespaces []string `mapstructure:"namespaces"`

	// ArtifactCacheDir holds downloaded and extracted source artifacts, one
	// directory per artifact digest; default <temp dir>/claimwarden-artifacts.
	ArtifactCacheDir string `mapstructure:"artifactCacheDir"`

	// MaxArtifactSize is the largest artifact downloaded, in bytes; default
	// 100 MiB (source-controller's own default limit for Git artifacts is lower).
	MaxArtifactSize int64 `mapstructure:"maxArtifactSize"`

	// MaxCacheSize bounds the bytes artifactCacheDir holds, extracted
	// artifacts and downloads in progress (each counted at its worst case,
	// maxArtifactSize plus 256 MiB extracted); least recently used artifacts
	// not in use are evicted first. Default 768 MiB, which the shipped
	// Deployment's 1Gi emptyDir holds.
	MaxCacheSize int64 `mapstructure:"maxCacheSize"`

	// MaxBuildBytes and MaxBuildNodes bound what one build reads: the bytes
	// of the YAML files under the Kustomization's path (aliases expanded)
	// and their YAML nodes. kustomize holds every node several times over,
	// so memory follows the nodes: defaults 8 MiB and 600,000 fit the
	// shipped Deployment's 512Mi; raise both, and the memory limit, for a
	// repository that holds large CRDs next to its StatefulSets.
	MaxBuildBytes int64 `mapstructure:"maxBuildBytes"`
	MaxBuildNodes int   `mapstructure:"maxBuildNodes"`

	// HelmReleases watches helm.toolkit.fluxcd.io/v2 HelmReleases (in
	// Namespaces), independently of Enabled: a StatefulSet whose upgrade
	// failed on immutable volumeClaimTemplates is read from the failed
	// release's record and converged, and helm-controller is asked to
	// upgrade again. Default false.
	HelmReleases bool `mapstructure:"helmReleases"`

	// MaxReleaseBytes bounds one Helm release record unpacked (the record
	// holds the chart's files besides the manifest); default 16 MiB.
	MaxReleaseBytes int64 `mapstructure:"maxReleaseBytes"`

	// DefaultServiceAccount mirrors kustomize-controller's and
	// helm-controller's --default-service-account (Flux's multi-tenancy
	// lockdown): a Kustomization or HelmRelease without
	// spec.serviceAccountName has every write claimwarden makes for it
	// authorised as this service account of its own namespace. Empty (the
	// default, as in Flux): such objects are applied by Flux as itself, and
	// claimwarden checks only that the StatefulSet is theirs. Set it to
	// the value the Flux controllers run with.
	DefaultServiceAccount string `mapstructure:"defaultServiceAccount"`

	// NoCrossNamespaceRefs mirrors the Flux controllers'
	// --no-cross-namespace-refs: a Kustomization or HelmRelease whose
	// source or chart is in another namespace is not read. Default false.
	NoCrossNamespaceRefs bool `mapstructure:"noCrossNamespaceRefs"`
}

// DefaultMaxArtifactSize bounds an artifact download unless configured.
const DefaultMaxArtifactSize = 100 << 20

func defaultFlux() Flux {
	return Flux{
		ArtifactCacheDir: filepath.Join(os.TempDir(), "claimwarden-artifacts"),
		MaxArtifactSize:  DefaultMaxArtifactSize,
		MaxCacheSize:     flux.DefaultMaxCacheSize,
		MaxBuildBytes:    flux.DefaultLimits.TotalBytes,
		MaxBuildNodes:    flux.DefaultLimits.Nodes,
		MaxReleaseBytes:  helm.DefaultMaxReleaseBytes,
	}
}

func (f Flux) validate(bad func(key string, value any, format string, args ...any)) {
	if f.MaxArtifactSize <= 0 {
		bad("flux.maxArtifactSize", f.MaxArtifactSize, "is not a positive number of bytes")
	}
	if need := f.MaxArtifactSize + flux.DefaultMaxExtractedSize; f.MaxCacheSize < need {
		bad("flux.maxCacheSize", f.MaxCacheSize, "cannot hold one download: it needs maxArtifactSize plus %d bytes extracted, %d bytes", int64(flux.DefaultMaxExtractedSize), need)
	}
	if f.MaxBuildBytes <= 0 {
		bad("flux.maxBuildBytes", f.MaxBuildBytes, "is not a positive number of bytes")
	}
	if f.MaxReleaseBytes <= 0 {
		bad("flux.maxReleaseBytes", f.MaxReleaseBytes, "is not a positive number of bytes")
	}
	if f.MaxBuildNodes <= 0 {
		bad("flux.maxBuildNodes", f.MaxBuildNodes, "is not a positive number of nodes")
	}
	if f.Enabled && f.ArtifactCacheDir == "" {
		bad("flux.artifactCacheDir", f.ArtifactCacheDir, "is empty: the integration needs a directory for artifacts")
	}
	for _, ns := range f.Namespaces {
		if problems := validation.IsDNS1123Label(ns); len(problems) > 0 {
			bad("flux.namespaces", ns, "is not a namespace name: %s", strings.Join(problems, "; "))
		}
	}
	if sa := f.DefaultServiceAccount; sa != "" {
		if problems := validation.IsDNS1123Subdomain(sa); len(problems) > 0 {
			bad("flux.defaultServiceAccount", sa, "is not a service account name: %s", strings.Join(problems, "; "))
		}
	}
}
