package flux

import (
	"context"
	"fmt"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// OCI annotations a `flux push artifact` records from the Git checkout it
// packed; source-controller copies them into the artifact's metadata.
const (
	ociSourceAnnotation   = "org.opencontainers.image.source"
	ociRevisionAnnotation = "org.opencontainers.image.revision"
)

// sourceOf reads the source a Kustomization builds from.
func sourceOf(ctx context.Context, r client.Reader, ks *kustomizev1.Kustomization) (sourcev1.Source, error) {
	ref := ks.Spec.SourceRef
	ns := ref.Namespace
	if ns == "" {
		ns = ks.Namespace
	}
	var obj interface {
		client.Object
		sourcev1.Source
	}
	switch ref.Kind {
	case sourcev1.GitRepositoryKind:
		obj = &sourcev1.GitRepository{}
	case sourcev1.OCIRepositoryKind:
		obj = &sourcev1.OCIRepository{}
	case sourcev1.BucketKind:
		obj = &sourcev1.Bucket{}
	case sourcev1.ExternalArtifactKind:
		obj = &sourcev1.ExternalArtifact{}
	default:
		return nil, fmt.Errorf("kustomization %s/%s: spec.sourceRef.kind %q is not a source claimwarden reads", ks.Namespace, ks.Name, ref.Kind)
	}
	if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, obj); err != nil {
		return nil, fmt.Errorf("kustomization %s/%s: spec.sourceRef %s %s/%s: %w", ks.Namespace, ks.Name, ref.Kind, ns, ref.Name, err)
	}
	return obj, nil
}

// provenance is the repository and revision commit statuses go to: a Git
// repository's URL and the artifact's revision; for an OCI artifact pushed
// from a Git checkout, the repository and commit it recorded. The
// repository never carries user information (proposal.RepositoryURL).
func provenance(src sourcev1.Source, a *meta.Artifact) (repository, revision string) {
	revision = a.Revision
	switch s := src.(type) {
	case *sourcev1.GitRepository:
		repository = s.Spec.URL
	case *sourcev1.OCIRepository:
		if r := a.Metadata[ociSourceAnnotation]; r != "" {
			repository = r
			if rev := a.Metadata[ociRevisionAnnotation]; rev != "" {
				revision = rev
			}
		}
	}
	return proposal.RepositoryURL(repository), revision
}
