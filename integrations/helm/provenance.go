package helm

import (
	"context"
	"fmt"
	"slices"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// Labels kustomize-controller puts on what a Kustomization applies.
const (
	kustomizationNameLabel      = "kustomize.toolkit.fluxcd.io/name"
	kustomizationNamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// provenance is where a failed release's commit statuses go: repository and
// revision empty when it has no commit; waiting when what it was built
// from has moved on.
type provenance struct {
	repository, revision, waiting string
}

// provenanceOf finds the commit a failed release came from: the Git commit
// its chart was built from (a HelmChart of a GitRepository), else the commit
// of the Kustomization that applied the HelmRelease from Git. A chart from a
// HelmRepository or an OCI registry applied otherwise has no commit.
func provenanceOf(ctx context.Context, r client.Reader, hr *helmv2.HelmRelease, chartVersion string) (provenance, error) {
	if gitChart(hr) {
		ns, name := hr.Status.GetHelmChart()
		var chart sourcev1.HelmChart
		if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &chart); err != nil {
			return provenance{}, fmt.Errorf("HelmRelease %s/%s: HelmChart %s/%s: %w", hr.Namespace, hr.Name, ns, name, err)
		}
		if chart.Status.Artifact == nil || chart.Status.Artifact.Revision != chartVersion {
			// A newer chart was built; helm-controller releases it next.
			return provenance{waiting: "waiting for helm-controller to release the HelmChart's newest artifact"}, nil
		}
		var repo sourcev1.GitRepository
		if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: chart.Spec.SourceRef.Name}, &repo); err != nil {
			return provenance{}, fmt.Errorf("HelmRelease %s/%s: GitRepository %s/%s of HelmChart %s/%s: %w", hr.Namespace, hr.Name, ns, chart.Spec.SourceRef.Name, ns, name, err)
		}
		return provenance{repository: proposal.RepositoryURL(repo.Spec.URL), revision: chart.Status.ObservedSourceArtifactRevision}, nil
	}
	ksName, ksNamespace := hr.Labels[kustomizationNameLabel], hr.Labels[kustomizationNamespaceLabel]
	if ksName == "" || ksNamespace == "" {
		return provenance{}, nil
	}
	var ks kustomizev1.Kustomization
	if err := r.Get(ctx, types.NamespacedName{Namespace: ksNamespace, Name: ksName}, &ks); err != nil {
		return provenance{}, fmt.Errorf("HelmRelease %s/%s: Kustomization %s/%s that applied it: %w", hr.Namespace, hr.Name, ksNamespace, ksName, err)
	}
	if !appliedBy(&ks, hr) {
		// Whoever edits the HelmRelease can set the labels; only the
		// Kustomization's own inventory says it applied the HelmRelease.
		return provenance{}, nil
	}
	ref := ks.Spec.SourceRef
	if ref.Kind != sourcev1.GitRepositoryKind {
		return provenance{}, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = ks.Namespace
	}
	var repo sourcev1.GitRepository
	if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, &repo); err != nil {
		return provenance{}, fmt.Errorf("HelmRelease %s/%s: GitRepository %s/%s of Kustomization %s/%s: %w", hr.Namespace, hr.Name, ns, ref.Name, ksNamespace, ksName, err)
	}
	// The HelmRelease as it is now was applied at the Kustomization's last
	// applied revision.
	return provenance{repository: proposal.RepositoryURL(repo.Spec.URL), revision: ks.Status.LastAppliedRevision}, nil
}

// gitChart reports whether the HelmRelease's chart is built from a
// GitRepository (spec.chart with a GitRepository sourceRef).
func gitChart(hr *helmv2.HelmRelease) bool {
	return hr.Spec.Chart != nil && hr.Spec.Chart.Spec.SourceRef.Kind == sourcev1.GitRepositoryKind
}

// noCommitNote says, once, that a release's chart names no commit: neither
// built from Git nor applied by a Kustomization, nothing is posted.
func noCommitNote(hr *helmv2.HelmRelease, chart string) (source.Note, bool) {
	if gitChart(hr) || (hr.Labels[kustomizationNameLabel] != "" && hr.Labels[kustomizationNamespaceLabel] != "") {
		return source.Note{}, false
	}
	from := "spec.chartRef " + chartRefKind(hr)
	if hr.Spec.Chart != nil {
		from = hr.Spec.Chart.Spec.SourceRef.Kind + " " + hr.Spec.Chart.Spec.SourceRef.Name
	}
	return source.Note{Type: corev1.EventTypeNormal, Reason: ReasonNoCommit,
		Message: fmt.Sprintf("chart %s comes from %s, which names no Git commit, and no Kustomization applied the HelmRelease: claimwarden converges without a commit status", chart, from)}, true
}

func chartRefKind(hr *helmv2.HelmRelease) string {
	if hr.Spec.ChartRef == nil {
		return "(none)"
	}
	return hr.Spec.ChartRef.Kind + " " + hr.Spec.ChartRef.Name
}

// appliedBy reports whether the HelmRelease is in the Kustomization's
// inventory.
func appliedBy(ks *kustomizev1.Kustomization, hr *helmv2.HelmRelease) bool {
	if ks.Status.Inventory == nil {
		return false
	}
	id := manifests.InventoryID(hr.Namespace, hr.Name, helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind).GroupKind())
	return slices.ContainsFunc(ks.Status.Inventory.Entries, func(e kustomizev1.ResourceRef) bool { return e.ID == id })
}
