package autoresize

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"

	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Files reads one branch of a repository.
type Files interface {
	File(ctx context.Context, path string) ([]byte, error)
	Files(ctx context.Context, dir string) ([]string, error)
}

// maxChartBytes bounds the files of a chart read to render it.
const maxChartBytes = 16 << 20

// kustomizationNames are the names kustomize reads a kustomization from.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// Edit is the change of files in Git that sets the size of template index
// of t to size where w says the tool reads it: the values a HelmRelease
// sets in its manifest or the values file of a chart (found by rendering;
// key names the value when rendering cannot tell), a kustomize overlay's
// patch or manifest, or the one plain manifest under the path that sets
// it. f reads w's branch, chart the chart's (f when the same). Nothing
// when Git has that size already.
func Edit(ctx context.Context, rnd gitedit.Renderer, f, chart Files, w Where, t gitedit.Target, index int, size, key string) ([]pullrequest.File, error) {
	if w.Chart != "" {
		return editValues(ctx, rnd, f, chart, w, t, size, key)
	}
	files, err := f.Files(ctx, w.Dir)
	if err != nil {
		return nil, err
	}
	if w.DetectChart && slices.Contains(files, path.Join(w.Dir, "Chart.yaml")) {
		w.Chart = w.Dir
		return editValues(ctx, rnd, f, f, w, t, size, key)
	}
	for _, name := range kustomizationNames {
		p := path.Join(w.Dir, name)
		if slices.Contains(files, p) {
			return editOverlay(ctx, f, p, t, index, size)
		}
	}
	return editManifests(ctx, f, files, w.Dir, t, size)
}

func editOverlay(ctx context.Context, f Files, p string, t gitedit.Target, index int, size string) ([]pullrequest.File, error) {
	src, err := f.File(ctx, p)
	if err != nil {
		return nil, err
	}
	edits, err := gitedit.SetOverlaySize(gitedit.Overlay{
		Path: p, Kustomization: src,
		Read: func(name string) ([]byte, error) {
			if strings.HasPrefix(name, "../") || name == ".." {
				return nil, fmt.Errorf("%s is outside the repository", name)
			}
			return f.File(ctx, name)
		},
	}, t, index, size)
	return pullrequestFiles(edits), err
}

// editManifests edits the one manifest under dir that sets the size.
func editManifests(ctx context.Context, f Files, files []string, dir string, t gitedit.Target, size string) ([]pullrequest.File, error) {
	edits, err := gitedit.SetSizeInOne(yamlFiles(files), func(p string) ([]byte, error) { return f.File(ctx, p) }, t, size)
	var several *gitedit.SetInSeveral
	switch {
	case errors.Is(err, gitedit.ErrNotSet):
		return nil, fmt.Errorf("no manifest under %q sets the size of %s", "/"+dir, t)
	case errors.As(err, &several):
		return nil, fmt.Errorf("several manifests under %q set the size of %s; not edited", "/"+dir, t)
	case err != nil:
		return nil, err
	}
	return pullrequestFiles(edits), nil
}

// yamlFiles are the YAML files among files.
func yamlFiles(files []string) []string {
	var out []string
	for _, p := range files {
		if ext := path.Ext(p); ext == ".yaml" || ext == ".yml" {
			out = append(out, p)
		}
	}
	return out
}

// pullrequestFiles are edits as a pull request's files; nil for none.
func pullrequestFiles(edits []gitedit.Edit) []pullrequest.File {
	if len(edits) == 0 {
		return nil
	}
	out := make([]pullrequest.File, 0, len(edits))
	for _, e := range edits {
		out = append(out, pullrequest.File{Path: e.Path, Content: e.Content})
	}
	return out
}

// editValues edits the value that sets the size where the tool's values
// are: the HelmRelease's spec.values in its manifest when a value there
// sets it, else the last of the release's values files whose value sets
// it, or the chart's values.yaml. Each is rendered with the release's
// other values, as the tool merges them, by rnd (out of the controller's
// process: the chart is the tenant's).
func editValues(ctx context.Context, rnd gitedit.Renderer, f, chartFiles Files, w Where, t gitedit.Target, size, key string) ([]pullrequest.File, error) {
	if rnd == nil {
		return nil, errors.New("charts are rendered out of the controller's process, and no renderer is configured")
	}
	chart, err := readChart(ctx, chartFiles, w.Chart)
	if err != nil {
		return nil, err
	}
	valuesFiles := w.ValuesFiles
	if len(valuesFiles) == 0 {
		valuesFiles = []string{path.Join(w.Chart, "values.yaml")}
	}
	layers := make([][]byte, len(valuesFiles))
	for i, p := range valuesFiles {
		if layers[i], err = chartFiles.File(ctx, p); err != nil {
			return nil, err
		}
	}
	r := gitedit.Release{Chart: chart, Options: common.ReleaseOptions{Name: w.Release.Name, Namespace: w.Release.Namespace}, Renderer: rnd}
	if w.Inline != nil && len(w.HelmValues) > 0 {
		in := gitedit.Inline(*w.Inline)
		r.Under = slices.Concat(layers, w.HelmValues[:len(w.HelmValues)-1])
		out, err := editInline(ctx, f, w.Dir, in, r, t, size, key)
		if !errors.Is(err, gitedit.ErrNotSet) {
			return out, err
		}
		switch {
		case w.HelmChart != nil:
			return nil, fmt.Errorf("%w; the chart is from a Helm repository (HelmChart %s): set the size in %s", err, w.HelmChart, in)
		case w.ChartRepository != "":
			return nil, fmt.Errorf("%w; the chart's values files are in %s, not in the repository of the manifest: set the size in %s", err, proposal.RepositoryURL(w.ChartRepository), in)
		}
	}
	var notSet []error
	for i, p := range slices.Backward(valuesFiles) {
		r.Values, r.Under = layers[i], layers[:i]
		r.Over = slices.Concat(layers[i+1:], w.HelmValues)
		out, changed, err := gitedit.SetValuesSize(ctx, r, t, size, key)
		switch {
		case errors.Is(err, gitedit.ErrNotSet):
			notSet = append(notSet, fmt.Errorf("%s: %w", p, err))
		case err != nil:
			return nil, fmt.Errorf("%s: %w", p, err)
		case changed:
			return []pullrequest.File{{Path: p, Content: out}}, nil
		default:
			return nil, nil
		}
	}
	if len(w.HelmValues) > 0 && w.Inline == nil {
		notSet = append(notSet, errors.New("the tool object sets values itself (a HelmRelease's spec.values, an Application's helm.values or helm.valuesObject), and no Flux Kustomization or Argo CD Application applies it from Git, where they would be edited"))
	}
	return nil, errors.Join(notSet...)
}

// editInline edits the value of the tool object's own values in that
// sets the size, in the one manifest under dir that holds the object.
func editInline(ctx context.Context, f Files, dir string, in gitedit.Inline, r gitedit.Release, t gitedit.Target, size, key string) ([]pullrequest.File, error) {
	files, err := f.Files(ctx, dir)
	if err != nil {
		return nil, err
	}
	edits, err := gitedit.EditInOne(yamlFiles(files), func(p string) ([]byte, error) { return f.File(ctx, p) },
		func(src []byte) ([]byte, bool, error) {
			return gitedit.SetInlineValuesSize(ctx, r, src, in, t, size, key)
		}, gitedit.ErrNotHeld)
	var several *gitedit.SetInSeveral
	switch {
	case err == gitedit.ErrNotSet: // EditInOne's answer when no manifest holds it
		return nil, fmt.Errorf("no manifest under %q holds %s: %w", "/"+dir, in, gitedit.ErrNotSet)
	case errors.As(err, &several):
		return nil, fmt.Errorf("several manifests under %q hold %s; not edited", "/"+dir, in)
	case err != nil:
		return nil, err
	}
	return pullrequestFiles(edits), nil
}

// readChart reads the files of the chart in directory dir, bounded in
// files and bytes; only the renderer loads them (its archives unpack
// there, within bounds of their own).
func readChart(ctx context.Context, f Files, dir string) ([]gitedit.ChartFile, error) {
	paths, err := f.Files(ctx, dir)
	if err != nil {
		return nil, err
	}
	var files []gitedit.ChartFile
	total := 0
	for _, p := range paths {
		b, err := f.File(ctx, p)
		if err != nil {
			return nil, err
		}
		if total += len(b); total > maxChartBytes {
			return nil, fmt.Errorf("chart %s: more than %d bytes", dir, maxChartBytes)
		}
		files = append(files, gitedit.ChartFile{Name: strings.TrimPrefix(p, dir+"/"), Data: b})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("chart %s: no files", dir)
	}
	return files, nil
}

// ChartBump is a chart's version a pull request bumps, so that Flux
// packages the chart anew with the pull request's values.
type ChartBump struct {
	// ChartFile is the chart's Chart.yaml; From and To its versions.
	ChartFile, From, To string
}

// BumpChart is files, a pull request's edits made where w says, with
// the chart's version bumped in its Chart.yaml (read by f, the branch as
// it is) when Flux packages the chart anew only then (w.ChartByVersion)
// and an edit is in a file its artifact carries: one in the chart's
// directory, or a values file (source-controller merges them into the
// chart's values.yaml). A HelmRelease's own spec.values need no bump:
// helm-controller upgrades on a change of its spec. Bumped once, whatever
// the number of edits: the version after the branch's.
func BumpChart(ctx context.Context, f Files, w Where, files []pullrequest.File) ([]pullrequest.File, *ChartBump, error) {
	if w.ChartByVersion == nil || !slices.ContainsFunc(files, func(e pullrequest.File) bool { return inChartArtifact(w, e.Path) }) {
		return files, nil, nil
	}
	p := path.Join(w.Chart, "Chart.yaml")
	src, err := f.File(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	out, from, to, err := gitedit.BumpChartVersion(src)
	if err != nil {
		return nil, nil, fmt.Errorf("HelmRelease %s applies a change of chart %s only with a new chart version (reconcileStrategy ChartVersion, Flux's default), and %s cannot be bumped: %w; "+
			"set spec.chart.spec.reconcileStrategy: Revision on HelmRelease %s, or give the chart a SemVer version", w.ChartByVersion, "/"+w.Chart, p, err, w.ChartByVersion)
	}
	return append(files, pullrequest.File{Path: p, Content: out}), &ChartBump{ChartFile: p, From: from, To: to}, nil
}

// inChartArtifact reports whether the file at p of the pull request's
// repository is in the artifact source-controller packages of w's chart:
// the chart is in that repository, and p under the chart's directory or
// one of the values files.
func inChartArtifact(w Where, p string) bool {
	if w.ChartRepository != "" {
		return false
	}
	return w.Chart == "" || strings.HasPrefix(p, w.Chart+"/") || slices.Contains(w.ValuesFiles, p)
}
