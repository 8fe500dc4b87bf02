package autoresize

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// repo is a branch's files in memory.
type repo map[string]string

func (r repo) File(_ context.Context, p string) ([]byte, error) {
	if s, ok := r[p]; ok {
		return []byte(s), nil
	}
	return nil, fmt.Errorf("%s: %w", p, pullrequest.ErrNotFound)
}

func (r repo) Files(_ context.Context, dir string) ([]string, error) {
	var out []string
	for p := range r {
		if dir == "" || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

const webManifest = `# web's database
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      resources:
        requests:
          storage: 10Gi # grown by autoresize
`

var web = gitedit.Target{Namespace: "shop", StatefulSet: "web", Template: "data"}

func edit(t *testing.T, r repo, w Where, key string) []pullrequest.File {
	t.Helper()
	files, err := Edit(context.Background(), testRenderer(t), r, r, w, web, 0, "13Gi", key)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// onlyLine reports whether after differs from before in exactly the one
// line, which reads want.
func onlyLine(before, after, want string) bool {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	if len(a) != len(b) {
		return false
	}
	changed := 0
	for i := range b {
		if a[i] != b[i] {
			changed++
			if strings.TrimSpace(a[i]) != want {
				return false
			}
		}
	}
	return changed == 1
}

// Under a Kustomization's path without a kustomization file, the one
// manifest that sets the size is edited, on its line only; other
// directories are not read.
func TestEditPlainManifests(t *testing.T) {
	r := repo{
		"apps/shop/web.yaml":     webManifest,
		"apps/shop/service.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
		"apps/other/web.yaml":    webManifest,
	}
	files := edit(t, r, Where{Dir: "apps/shop"}, "")
	if len(files) != 1 || files[0].Path != "apps/shop/web.yaml" || !onlyLine(webManifest, string(files[0].Content), "storage: 13Gi # grown by autoresize") {
		t.Fatalf("edits %+v, want apps/shop/web.yaml's size line", files)
	}
	r["apps/shop/copy.yaml"] = webManifest
	if _, err := Edit(context.Background(), testRenderer(t), r, r, Where{Dir: "apps/shop"}, web, 0, "13Gi", ""); err == nil || !strings.Contains(err.Error(), "several manifests") {
		t.Errorf("two manifests setting the size: %v, want refused", err)
	}
	grown := repo{"apps/shop/web.yaml": strings.Replace(webManifest, "10Gi", "13Gi", 1)}
	if files, err := Edit(context.Background(), testRenderer(t), grown, grown, Where{Dir: "apps/shop"}, web, 0, "13Gi", ""); err != nil || files != nil {
		t.Errorf("Git at the size already: %+v, %v; want nothing to change", files, err)
	}
}

// With a kustomization file the overlay is edited: here the manifest it
// lists among its resources.
func TestEditOverlay(t *testing.T) {
	r := repo{
		"apps/shop/kustomization.yaml": "resources:\n- web.yaml\n",
		"apps/shop/web.yaml":           webManifest,
	}
	files := edit(t, r, Where{Dir: "apps/shop"}, "")
	if len(files) != 1 || files[0].Path != "apps/shop/web.yaml" || !onlyLine(webManifest, string(files[0].Content), "storage: 13Gi # grown by autoresize") {
		t.Errorf("edits %+v, want the listed manifest's size line", files)
	}
}

const chartTemplate = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
spec:
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      resources:
        requests:
          storage: {{ .Values.persistence.size }}
`

// A chart in Git is rendered to find the value: the last values file
// whose value moves the size is edited, or the chart's values.yaml.
func TestEditHelmValues(t *testing.T) {
	r := repo{
		"charts/web/Chart.yaml":                 "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"charts/web/templates/statefulset.yaml": chartTemplate,
		"charts/web/values.yaml":                "persistence:\n  size: 1Gi\nreplicas: 1\n",
		"envs/prod/values.yaml":                 "# prod\npersistence:\n  size: 10Gi # the database\n",
		"envs/prod/unrelated.yaml":              "limits:\n  size: 10Gi\n",
	}
	w := Where{Chart: "charts/web", ValuesFiles: []string{"envs/prod/values.yaml", "envs/prod/unrelated.yaml"}, Release: types.NamespacedName{Namespace: "shop", Name: "web"}}
	files := edit(t, r, w, "")
	if len(files) != 1 || files[0].Path != "envs/prod/values.yaml" || !onlyLine(r["envs/prod/values.yaml"], string(files[0].Content), "size: 13Gi # the database") {
		t.Errorf("edits %+v, want the prod values' size line", files)
	}

	w.ValuesFiles = nil
	r["charts/web/values.yaml"] = "persistence:\n  size: 10Gi\n"
	files = edit(t, r, w, "")
	if len(files) != 1 || files[0].Path != "charts/web/values.yaml" {
		t.Errorf("edits %+v, want the chart's values.yaml", files)
	}
	if _, err := Edit(context.Background(), testRenderer(t), r, r, Where{Chart: "charts/none"}, web, 0, "13Gi", ""); err == nil {
		t.Error("a chart that is not there: no error")
	}
	broken := repo{"charts/web/Chart.yaml": "name: [", "charts/web/values.yaml": ""}
	if _, err := Edit(context.Background(), testRenderer(t), broken, broken, Where{Chart: "charts/web"}, web, 0, "13Gi", ""); err == nil || errors.Is(err, pullrequest.ErrNotFound) {
		t.Errorf("a broken chart: %v, want its error", err)
	}
}

// An Argo CD path holding a Chart.yaml is a chart: its values files (the
// Application's, relative to the path) are edited, rendered under the
// values the Application sets itself.
func TestEditDetectsAnArgoCDChart(t *testing.T) {
	r := repo{
		"charts/web/Chart.yaml":                 "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"charts/web/templates/statefulset.yaml": chartTemplate,
		"charts/web/values.yaml":                "persistence:\n  size: 1Gi\n",
		"charts/web/values-prod.yaml":           "persistence:\n  size: 10Gi\n",
	}
	w := Where{Dir: "charts/web", DetectChart: true, ValuesFiles: []string{"charts/web/values-prod.yaml"}, Release: types.NamespacedName{Namespace: "shop", Name: "web"}}
	files := edit(t, r, w, "")
	if len(files) != 1 || files[0].Path != "charts/web/values-prod.yaml" || string(files[0].Content) != "persistence:\n  size: 13Gi\n" {
		t.Errorf("edits %+v, want values-prod.yaml's size", files)
	}
	// Values the Application sets itself render over the files: where
	// they set the size and no parent applies the Application from Git,
	// that is said.
	w.HelmValues = [][]byte{[]byte("persistence: {size: 10Gi}\n")}
	if _, err := Edit(context.Background(), testRenderer(t), r, r, w, web, 0, "13Gi", ""); err == nil || !strings.Contains(err.Error(), "helm.valuesObject") {
		t.Errorf("inline values: %v, want refused, naming helm.valuesObject", err)
	}
	w.HelmValues = [][]byte{[]byte("image: web:2\n")}
	if files := edit(t, r, w, ""); len(files) != 1 || files[0].Path != "charts/web/values-prod.yaml" {
		t.Errorf("inline values that leave the size to the files: edits %+v, want values-prod.yaml", files)
	}
}

// webRelease is a HelmRelease manifest that sets values itself.
const webRelease = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
spec:
  chart:
    spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: apps}}
  values:
    persistence:
      size: 10Gi # the shop's orders
`

// A HelmRelease's spec.values override its values files: a value there
// that sets the size is edited in the HelmRelease's manifest under the
// Kustomization's path; one that does not leaves the values files to
// edit, rendered under spec.values.
func TestEditHelmReleaseValues(t *testing.T) {
	r := repo{
		"charts/web/Chart.yaml":                 "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"charts/web/templates/statefulset.yaml": chartTemplate,
		"charts/web/values.yaml":                "persistence:\n  size: 1Gi\n",
		"apps/shop/web.yaml":                    webRelease,
		"apps/shop/service.yaml":                "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
	}
	w := Where{Dir: "apps/shop", Chart: "charts/web", Release: types.NamespacedName{Namespace: "shop", Name: "web"},
		HelmValues: [][]byte{[]byte("persistence: {size: 10Gi}\n")},
		Inline:     &source.Inline{Kind: "HelmRelease", Namespace: "shop", Name: "web", Field: []string{"spec", "values"}}}
	files := edit(t, r, w, "")
	if len(files) != 1 || files[0].Path != "apps/shop/web.yaml" || !onlyLine(webRelease, string(files[0].Content), "size: 13Gi # the shop's orders") {
		t.Fatalf("edits %+v, want the HelmRelease's spec.values size line", files)
	}

	// spec.values sets something else: the chart's values.yaml is edited.
	r["apps/shop/web.yaml"] = strings.Replace(webRelease, "persistence:\n      size: 10Gi # the shop's orders", "image: {tag: \"1.2\"}", 1)
	r["charts/web/values.yaml"] = "persistence:\n  size: 10Gi\n"
	w.HelmValues = [][]byte{[]byte("image: {tag: \"1.2\"}\n")}
	files = edit(t, r, w, "")
	if len(files) != 1 || files[0].Path != "charts/web/values.yaml" || string(files[0].Content) != "persistence:\n  size: 13Gi\n" {
		t.Errorf("edits %+v, want the chart's values.yaml", files)
	}
	// ... unless the chart is in another repository than the manifest.
	w.ChartRepository = "https://git.example/charts"
	if _, err := Edit(context.Background(), testRenderer(t), r, r, w, web, 0, "13Gi", ""); err == nil || !strings.Contains(err.Error(), "set the size in HelmRelease shop/web's spec.values") {
		t.Errorf("values files in another repository: %v, want refused", err)
	}

	// spec.values sets the size, but the values file is the one edited
	// when the HelmRelease is not applied from Git: rendering says no
	// value of the file moves it.
	w = Where{Chart: "charts/web", Release: w.Release, HelmValues: [][]byte{[]byte("persistence: {size: 10Gi}\n")}}
	if _, err := Edit(context.Background(), testRenderer(t), r, r, w, web, 0, "13Gi", ""); !errors.Is(err, gitedit.ErrNotSet) || !strings.Contains(err.Error(), "sets values itself") {
		t.Errorf("a size set by spec.values outside Git: %v, want ErrNotSet", err)
	}
}

// A chart from a Helm repository is read from its artifact; only the
// HelmRelease's spec.values, in Git, can be edited.
func TestEditHelmReleaseValuesOfAPackagedChart(t *testing.T) {
	chart := repo{
		"web/Chart.yaml":                 "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"web/templates/statefulset.yaml": chartTemplate,
		"web/values.yaml":                "persistence:\n  size: 1Gi\n",
	}
	git := repo{"apps/shop/web.yaml": webRelease}
	w := Where{Dir: "apps/shop", Chart: "web", Release: types.NamespacedName{Namespace: "shop", Name: "web"},
		HelmChart:  &types.NamespacedName{Namespace: "flux-system", Name: "shop-web"},
		HelmValues: [][]byte{[]byte("persistence: {size: 10Gi}\n")},
		Inline:     &source.Inline{Kind: "HelmRelease", Namespace: "shop", Name: "web", Field: []string{"spec", "values"}}}
	files, err := Edit(context.Background(), testRenderer(t), git, chart, w, web, 0, "13Gi", "")
	if err != nil || len(files) != 1 || files[0].Path != "apps/shop/web.yaml" || !onlyLine(webRelease, string(files[0].Content), "size: 13Gi # the shop's orders") {
		t.Fatalf("edits %+v, %v; want the HelmRelease's spec.values size line", files, err)
	}
	git["apps/shop/web.yaml"] = strings.Replace(webRelease, "persistence:\n      size: 10Gi # the shop's orders", "image: {tag: \"1.2\"}", 1)
	w.HelmValues = [][]byte{[]byte("image: {tag: \"1.2\"}\n")}
	if _, err := Edit(context.Background(), testRenderer(t), git, chart, w, web, 0, "13Gi", ""); err == nil || !strings.Contains(err.Error(), "from a Helm repository") {
		t.Errorf("the size from the packaged chart's values: %v, want refused, saying the chart is from a Helm repository", err)
	}
}

// With reconcileStrategy ChartVersion a values file's edit comes with the
// chart's version bumped, once, one line of its Chart.yaml: the values
// files (wherever they are) and the chart's values.yaml are packaged into
// the chart's artifact, which source-controller rebuilds only for a new
// version. The HelmRelease's own spec.values, and any edit under
// reconcileStrategy Revision, need none. A version that cannot be bumped
// is refused, saying what to change.
func TestBumpChart(t *testing.T) {
	ctx := context.Background()
	chartFile := "apiVersion: v2\nname: web\nversion: 1.0.0 # the chart's\n"
	r := repo{
		"charts/web/Chart.yaml":                 chartFile,
		"charts/web/templates/statefulset.yaml": chartTemplate,
		"charts/web/values.yaml":                "persistence:\n  size: 10Gi\n",
		"envs/prod/values.yaml":                 "persistence:\n  size: 10Gi\n",
		"apps/shop/web.yaml":                    webRelease,
	}
	hr := &types.NamespacedName{Namespace: "apps", Name: "web"}
	w := Where{Chart: "charts/web", ValuesFiles: []string{"envs/prod/values.yaml"}, Release: types.NamespacedName{Namespace: "shop", Name: "web"}, ChartByVersion: hr}
	bumped := func(w Where, files []pullrequest.File) ([]pullrequest.File, *ChartBump) {
		t.Helper()
		out, bump, err := BumpChart(ctx, r, w, files)
		if err != nil {
			t.Fatal(err)
		}
		return out, bump
	}

	files, bump := bumped(w, edit(t, r, w, ""))
	if len(files) != 2 || files[0].Path != "envs/prod/values.yaml" || files[1].Path != "charts/web/Chart.yaml" ||
		!onlyLine(chartFile, string(files[1].Content), "version: 1.0.1 # the chart's") {
		t.Errorf("edits %+v, want the values file's size and Chart.yaml's version", files)
	}
	if bump == nil || *bump != (ChartBump{ChartFile: "charts/web/Chart.yaml", From: "1.0.0", To: "1.0.1"}) {
		t.Errorf("bump %+v, want charts/web/Chart.yaml 1.0.0 → 1.0.1", bump)
	}
	// Two values files edited for two templates: one bump, from the branch's version.
	two := []pullrequest.File{{Path: "envs/prod/values.yaml"}, {Path: "charts/web/values.yaml"}}
	if files, bump := bumped(w, two); len(files) != 3 || bump == nil || bump.To != "1.0.1" {
		t.Errorf("two values files: edits %+v, bump %+v; want one bump to 1.0.1", files, bump)
	}

	w.ValuesFiles = nil
	if files, bump = bumped(w, edit(t, r, w, "")); len(files) != 2 || files[0].Path != "charts/web/values.yaml" || bump == nil {
		t.Errorf("the chart's values.yaml: edits %+v, want it and Chart.yaml", files)
	}

	inline := w
	inline.Dir, inline.HelmValues = "apps/shop", [][]byte{[]byte("persistence: {size: 10Gi}\n")}
	inline.Inline = &source.Inline{Kind: "HelmRelease", Namespace: "shop", Name: "web", Field: []string{"spec", "values"}}
	if files, bump = bumped(inline, edit(t, r, inline, "")); len(files) != 1 || files[0].Path != "apps/shop/web.yaml" || bump != nil {
		t.Errorf("the HelmRelease's spec.values: edits %+v, bump %+v; want its manifest only", files, bump)
	}

	elsewhere := w
	elsewhere.ChartRepository = "https://git.example/charts"
	if files, bump = bumped(elsewhere, []pullrequest.File{{Path: "charts/web/release.yaml"}}); len(files) != 1 || bump != nil {
		t.Errorf("a manifest where the chart's path is, the chart in another repository: edits %+v, bump %+v; want none", files, bump)
	}

	revision := w
	revision.ChartByVersion = nil
	if files, bump = bumped(revision, edit(t, r, revision, "")); len(files) != 1 || bump != nil {
		t.Errorf("reconcileStrategy Revision: edits %+v, bump %+v; want the values file only", files, bump)
	}

	for version, why := range map[string]string{"1.0": "not SemVer", "1.0.0-alpha": "no number to raise"} {
		r["charts/web/Chart.yaml"] = "apiVersion: v2\nname: web\nversion: " + version + "\n"
		_, _, err := BumpChart(ctx, r, w, edit(t, r, w, ""))
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "set spec.chart.spec.reconcileStrategy: Revision on HelmRelease apps/web") {
			t.Errorf("version %s: %v, want refused as %s, saying what to change", version, err, why)
		}
	}
}
