package helm

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

var _ source.AtRest = (*HelmReleases)(nil)
var _ source.Locator = (*HelmReleases)(nil)

// Names implements source.AtRest: the HelmRelease helm-controller's labels
// on live name (whoever writes live can set them: ManagesAtRest confirms).
func (*HelmReleases) Names(live metav1.Object) (types.NamespacedName, bool) {
	n := live.GetLabels()[HelmReleaseNameLabel]
	return types.NamespacedName{Namespace: live.GetLabels()[HelmReleaseNamespaceLabel], Name: n}, n != ""
}

// Locate implements source.Locator: the chart (in a GitRepository, or the
// HelmChart source-controller made of a HelmRepository's), its values
// files and the release; values the HelmRelease sets itself are edited in
// its manifest, where the Kustomization that applies it reads from
// (parents).
func (h *HelmReleases) Locate(ctx context.Context, obj client.Object, parents source.Parents) (source.Where, error) {
	hr := obj.(*helmv2.HelmRelease)
	key := client.ObjectKeyFromObject(hr)
	if hr.Spec.Chart == nil {
		return source.Where{}, fmt.Errorf("HelmRelease %s: no spec.chart (a chartRef): its chart is not in a Git repository or a Helm repository autoresize reads", key)
	}
	w, err := h.chart(ctx, hr)
	if err != nil {
		return source.Where{}, fmt.Errorf("HelmRelease %s: %w", key, err)
	}
	w.Release = types.NamespacedName{Namespace: hr.GetReleaseNamespace(), Name: hr.GetReleaseName()}
	if !setsValues(hr.Spec.Values) {
		if w.HelmChart != nil {
			return source.Where{}, fmt.Errorf("HelmRelease %s: its chart is from a HelmRepository and it sets no spec.values: no file in Git sets the size", key)
		}
		return w, nil
	}
	values, err := yaml.JSONToYAML(hr.Spec.Values.Raw)
	if err != nil {
		return source.Where{}, fmt.Errorf("HelmRelease %s: spec.values: %w", key, err)
	}
	w.HelmValues = [][]byte{values}
	m, ok, err := parents(ctx, hr, schema.GroupKind{Group: helmv2.GroupVersion.Group, Kind: helmv2.HelmReleaseKind})
	switch {
	case err != nil:
		return source.Where{}, err
	case !ok && w.HelmChart != nil:
		return source.Where{}, fmt.Errorf("HelmRelease %s: its chart is from a HelmRepository and no Flux Kustomization applies it from Git: no file in Git sets the size", key)
	case !ok:
		return w, nil
	}
	m.Chart, m.ValuesFiles, m.Release, m.HelmValues, m.HelmChart, m.ChartByVersion = w.Chart, w.ValuesFiles, w.Release, w.HelmValues, w.HelmChart, w.ChartByVersion
	m.Inline = &source.Inline{Kind: helmv2.HelmReleaseKind, Namespace: hr.Namespace, Name: hr.Name, Field: []string{"spec", "values"}}
	if w.HelmChart != nil {
		return m, nil
	}
	return m.ChartIn(w), nil
}

// chart is where a HelmRelease's chart is: in a GitRepository, or in a
// HelmRepository, read from the HelmChart source-controller made of it
// (status.helmChart), with its values files inside the chart.
func (h *HelmReleases) chart(ctx context.Context, hr *helmv2.HelmRelease) (source.Where, error) {
	spec := hr.Spec.Chart.Spec
	switch spec.SourceRef.Kind {
	case sourcev1.GitRepositoryKind:
		w, err := toolkit.GitRepository(ctx, h.Reader, hr.Namespace, spec.SourceRef.Namespace, spec.SourceRef.Name, h.NoCrossNamespaceRefs)
		if err != nil {
			return source.Where{}, err
		}
		w.Chart = source.RepoPath(spec.Chart)
		for _, f := range spec.ValuesFiles {
			w.ValuesFiles = append(w.ValuesFiles, source.RepoPath(f))
		}
		if spec.ReconcileStrategy != sourcev1.ReconcileStrategyRevision {
			w.ChartByVersion = &types.NamespacedName{Namespace: hr.Namespace, Name: hr.Name}
		}
		return w, nil
	case sourcev1.HelmRepositoryKind:
		if err := toolkit.CrossNamespaceRefused(hr.Namespace, spec.SourceRef.Namespace, h.NoCrossNamespaceRefs); err != nil {
			return source.Where{}, fmt.Errorf("its source is in %w", err)
		}
		ns, name, ok := strings.Cut(hr.Status.HelmChart, "/")
		if !ok {
			return source.Where{}, errors.New("its chart is from a HelmRepository and source-controller has made no HelmChart of it yet (status.helmChart)")
		}
		w := source.Where{HelmChart: &types.NamespacedName{Namespace: ns, Name: name}, Chart: path.Base(source.RepoPath(spec.Chart))}
		for _, f := range spec.ValuesFiles {
			w.ValuesFiles = append(w.ValuesFiles, path.Join(w.Chart, source.RepoPath(f)))
		}
		return w, nil
	}
	return source.Where{}, fmt.Errorf("its chart is from a %s (spec.chart.spec.sourceRef): autoresize reads charts from GitRepositories and HelmRepositories", spec.SourceRef.Kind)
}

// setsValues reports whether a HelmRelease's spec.values sets any.
func setsValues(v *apiextensionsv1.JSON) bool {
	if v == nil {
		return false
	}
	raw := strings.TrimSpace(string(v.Raw))
	return raw != "" && raw != "null" && raw != "{}"
}
