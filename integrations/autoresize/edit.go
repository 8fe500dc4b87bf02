package autoresize

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartloader "helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
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
// of t to size where w says the tool reads it: the values file of a chart
// (found by rendering; key names the value when rendering cannot tell), a
// kustomize overlay's patch or manifest, or the one plain manifest under
// the path that sets it. Nothing when Git has that size already.
func Edit(ctx context.Context, f Files, w Where, t gitedit.Target, index int, size, key string) ([]pullrequest.File, error) {
	if w.Chart != "" {
		return editValues(ctx, f, w, t, size, key)
	}
	files, err := f.Files(ctx, w.Dir)
	if err != nil {
		return nil, err
	}
	if w.DetectChart && slices.Contains(files, path.Join(w.Dir, "Chart.yaml")) {
		if w.InlineValues {
			return nil, errors.New("the chart's values are set in the Application itself (helm.values, helm.valuesObject), not in a file of the repository: move them to a values file (helm.valueFiles) for autoresize to edit")
		}
		w.Chart = w.Dir
		return editValues(ctx, f, w, t, size, key)
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
	var manifests []string
	for _, p := range files {
		if ext := path.Ext(p); ext == ".yaml" || ext == ".yml" {
			manifests = append(manifests, p)
		}
	}
	edits, err := gitedit.SetSizeInOne(manifests, func(p string) ([]byte, error) { return f.File(ctx, p) }, t, size)
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

// editValues edits the values file of a chart in Git that sets the size:
// the last of the release's values files whose value moves the size when
// the chart is rendered with it, or the chart's values.yaml.
func editValues(ctx context.Context, f Files, w Where, t gitedit.Target, size, key string) ([]pullrequest.File, error) {
	chart, err := loadChart(ctx, f, w.Chart)
	if err != nil {
		return nil, err
	}
	valuesFiles := w.ValuesFiles
	if len(valuesFiles) == 0 {
		valuesFiles = []string{path.Join(w.Chart, "values.yaml")}
	}
	var errs []error
	for _, p := range slices.Backward(valuesFiles) {
		src, err := f.File(ctx, p)
		if err != nil {
			return nil, err
		}
		out, changed, err := gitedit.SetValuesSize(gitedit.Release{
			Chart: chart, Options: common.ReleaseOptions{Name: w.Release.Name, Namespace: w.Release.Namespace}, Values: src,
		}, t, size, key)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
		case changed:
			return []pullrequest.File{{Path: p, Content: out}}, nil
		default:
			return nil, nil
		}
	}
	return nil, errors.Join(errs...)
}

// loadChart reads the chart in directory dir, bounded in files and bytes.
func loadChart(ctx context.Context, f Files, dir string) (*chartv2.Chart, error) {
	paths, err := f.Files(ctx, dir)
	if err != nil {
		return nil, err
	}
	var files []*archive.BufferedFile
	total := 0
	for _, p := range paths {
		b, err := f.File(ctx, p)
		if err != nil {
			return nil, err
		}
		if total += len(b); total > maxChartBytes {
			return nil, fmt.Errorf("chart %s: more than %d bytes", dir, maxChartBytes)
		}
		files = append(files, &archive.BufferedFile{Name: strings.TrimPrefix(p, dir+"/"), Data: b})
	}
	c, err := chartloader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	return c, nil
}
