package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/test/fixtures"

	"code.gitea.io/sdk/gitea"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartloader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	giteasrv "github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/promenv"
)

// overlayKustomization is an overlay that takes the StatefulSet, and its
// size, from a base.
const overlayKustomization = `# production
resources:
- ../../base
`

// mergeResize waits for the one autoresize pull request of repo, checks
// that its diff is want's lines only (removed, added, trimmed) of file
// only, merges it and returns the merge commit.
func mergeResize(t *testing.T, sdk *gitea.Client, owner, repo, file string, wantRemoved, wantAdded []string, ctl *controller) string {
	t.Helper()
	pr := checkResize(t, sdk, owner, repo, []string{file}, wantRemoved, wantAdded, ctl)
	return mergePullRequest(t, sdk, owner, repo, pr.Index)
}

// checkResize waits for the one autoresize pull request of repo, checks
// that its diff is want's lines only (removed, added, trimmed) of
// wantFiles only, in the diff's order, and returns it.
func checkResize(t *testing.T, sdk *gitea.Client, owner, repo string, wantFiles, wantRemoved, wantAdded []string, ctl *controller) *gitea.PullRequest {
	t.Helper()
	pr := waitPullRequests(t, sdk, owner, repo, 1, ctl)
	diff, _, err := sdk.GetPullRequestDiff(owner, repo, pr.Index, gitea.PullRequestDiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, l := range strings.Split(string(diff), "\n") {
		if f, ok := strings.CutPrefix(l, "+++ b/"); ok {
			files = append(files, f)
		}
	}
	if strings.Join(files, ",") != strings.Join(wantFiles, ",") {
		t.Errorf("the pull request edits %q, want %q only:\n%s", files, wantFiles, diff)
	}
	removed, added := fixtures.DiffLines(string(diff))
	trim := func(lines []string) string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = strings.TrimSpace(l)
		}
		return strings.Join(out, "\n")
	}
	if trim(removed) != strings.Join(wantRemoved, "\n") || trim(added) != strings.Join(wantAdded, "\n") {
		t.Errorf("the pull request removes %q and adds %q; want %q and %q:\n%s", removed, added, wantRemoved, wantAdded, diff)
	}
	return pr
}

// mergePullRequest merges pull request number as a person would and
// returns the merge commit.
func mergePullRequest(t *testing.T, sdk *gitea.Client, owner, repo string, number int64) string {
	t.Helper()
	if merged, _, err := sdk.MergePullRequest(owner, repo, number, gitea.MergePullRequestOption{Style: gitea.MergeStyleMerge}); err != nil || !merged {
		t.Fatalf("merging pull request %d: %v (merged %v)", number, err, merged)
	}
	pr, _, err := sdk.GetPullRequest(owner, repo, number)
	if err != nil || pr.MergedCommitID == nil {
		t.Fatalf("the merged pull request: %+v, %v", pr, err)
	}
	return *pr.MergedCommitID
}

// grownAfterMerge makes Flux fetch the merge commit sha and waits until it
// applied it, claimwarden converged it and grew the claims to size with
// the Pods kept, and the commit has success.
func (s *fluxScenario) grownAfterMerge(sha, size string, pods map[string]types.UID) {
	s.t.Helper()
	ctx := context.Background()
	if _, err := fluxenv.RequestReconcile(ctx, s.cl.admin, fluxenv.GitRepository(s.ks.Namespace, s.ks.Name, "", 0)); err != nil {
		s.t.Fatal(err)
	}
	s.kustomization(sha, "Ready after the merge", func(ks *kustomizev1.Kustomization) bool {
		return ready(ks) && ks.Status.LastAppliedRevision == "main@sha1:"+sha
	})
	waitRolloutDone(s.t, s.cl.admin, s.sts, 2, size, s.ctl)
	after := &appsv1.StatefulSet{}
	if err := s.cl.admin.Get(ctx, s.sts, after); err != nil {
		s.t.Fatal(err)
	}
	assertPodsKept(s.t, s.cl.admin, after, pods)
	waitStatus(s.t, s.g, s.repo, sha, "claimwarden/"+s.ns+"/web", "success", "2/2 claims compatible", s.ctl)
}

// Autoresize edits what sets the size where it is set: (b) a kustomize
// overlay whose size comes from its base gets a patch; (c) a Flux
// HelmRelease of a chart in Git gets its values file's value, found by
// rendering the chart. Each merge is applied by Flux and converged. (c') A
// HelmRelease applied by a Kustomization that sets the size in its
// spec.values gets that value edited in its manifest, also for a chart
// from a Helm repository (Gitea's package registry), read from
// source-controller's artifact. Under Flux's default reconcileStrategy,
// ChartVersion, the chart's version is bumped with the values file, or the
// merge would change nothing.
func TestAutoresizeSources(t *testing.T) {
	cl := started(t)
	startFlux(t)
	g := startGitea(t)
	prom := promenv.StartT(t, time.Second, cl.volumeStats)
	ctl := startController(t, cl, "autoresize-sources", "--flux", "--flux-helm-releases", "--flux-artifact-cache-dir", t.TempDir(),
		"--config", autoresizeConfig(t, cl, g, prom.URL, "autoresize_horizon_seconds: 600"))
	sdk := giteaSDK(t, g)

	t.Run("overlay", func(t *testing.T) {
		t.Parallel()
		testAutoresizeOverlay(t, cl, g, sdk, ctl)
	})
	t.Run("helm values", func(t *testing.T) {
		t.Parallel()
		testAutoresizeHelmValues(t, cl, g, sdk, ctl)
	})
	t.Run("helm release values", func(t *testing.T) {
		t.Parallel()
		testAutoresizeHelmReleaseValues(t, cl, g, sdk, ctl)
	})
	t.Run("helm repository values", func(t *testing.T) {
		t.Parallel()
		testAutoresizeHelmRepositoryValues(t, cl, g, sdk, ctl)
	})
	t.Run("helm chart version", func(t *testing.T) {
		t.Parallel()
		testAutoresizeChartVersion(t, cl, g, sdk, ctl)
	})
}

// (e) A volume that fills within autoresize_emergency_seconds grows before
// the merge, once, after its pull request says so; the merge is applied. Its
// own controller, as the emergency parameter is the whole controller's:
// the other scenarios fill their volumes at once, a jump that the rate
// over the window reads as filling fast for a minute.
func TestAutoresizeEmergency(t *testing.T) {
	cl := started(t)
	startFlux(t)
	g := startGitea(t)
	prom := promenv.StartT(t, time.Second, cl.volumeStats)
	ctl := startController(t, cl, "autoresize-emergency", "--flux",
		"--config", autoresizeConfig(t, cl, g, prom.URL, "autoresize_horizon_seconds: 600", "autoresize_emergency_seconds: 600"))
	sdk := giteaSDK(t, g)
	s, pods := setupFluxScenario(t, cl, g, ctl, "autoresize-emergency")
	claims := claimNames("web", 2)
	// Git comes first: while the repository refuses writes (archived), the
	// check that decides to grow now cannot open the pull request, and no
	// claim grows.
	archiveRepo(t, sdk, g.User, s.repo, true)
	// Filling from empty at 120Mi a minute, with no jump for the rate to
	// overstate: once the window has measured the rate, full in under 10
	// minutes at 1Gi, within autoresize_horizon_seconds and
	// autoresize_emergency_seconds (600); grown to 2Gi, in 16 or more,
	// beyond them for the 7 minutes it takes to reach 848Mi.
	fillAt(t, cl.admin, s.ns, "0", "120Mi", claims...)
	defer logAutoresizeStatus(t)
	autoresizeStatus(t, cl.admin, s.sts, time.Time{}, "the pull request refused", func(a *v1alpha1.AutoresizeStatus) bool {
		return strings.HasPrefix(a.Message, "autoresize failed: ") && strings.Contains(a.Message, s.repo)
	}, ctl)
	for _, name := range claims {
		if got := request(claim(t, cl.admin, s.ns, name)); got != "1Gi" {
			t.Errorf("%s requests %s with no pull request saying so, want 1Gi", name, got)
		}
	}
	archiveRepo(t, sdk, g.User, s.repo, false)
	pr := waitPullRequests(t, sdk, g.User, s.repo, 1, ctl)
	for _, name := range claims {
		waitFor(t, name+" grown to 2Gi before the merge", []*controller{ctl}, func(ctx context.Context) (bool, error) {
			pvc := claim(t, cl.admin, s.ns, name)
			return request(pvc) == "2Gi" && capacity(pvc) == "2Gi", nil
		})
	}
	st := autoresizeStatus(t, cl.admin, s.sts, time.Time{}, "the emergency said", func(a *v1alpha1.AutoresizeStatus) bool {
		return a.PullRequest == pr.HTMLURL && a.State == "open"
	}, ctl)
	pr, _, err := sdk.GetPullRequest(g.User, s.repo, pr.Index)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pr.Body, "**Grown now**") || !strings.Contains(pr.Body, "data-web-0") {
		t.Errorf("the pull request does not say the claims were grown before the merge:\n%s", pr.Body)
	}
	if pr.State != gitea.StateOpen {
		t.Errorf("pull request %s, want it open: Git has to catch up", pr.State)
	}
	t.Logf("status.autoresize: %+v", *st)

	sha := mergeResize(t, sdk, g.User, s.repo, "statefulset.yaml", []string{"storage: 1Gi"}, []string{"storage: 2Gi"}, ctl)
	s.grownAfterMerge(sha, "2Gi", pods)
}

// archiveRepo archives the repository, which then refuses every write, or
// unarchives it.
func archiveRepo(t *testing.T, sdk *gitea.Client, owner, repo string, archived bool) {
	t.Helper()
	if _, _, err := sdk.EditRepo(owner, repo, gitea.EditRepoOption{Archived: &archived}); err != nil {
		t.Fatalf("archiving %s/%s (%v): %v", owner, repo, archived, err)
	}
}

func testAutoresizeOverlay(t *testing.T, cl *cluster, g *giteasrv.Server, sdk *gitea.Client, ctl *controller) {
	ctx := context.Background()
	const name = "autoresize-overlay"
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	s := &fluxScenario{t: t, cl: cl, g: g, ctl: ctl, repo: name, ns: namespace(t, cl.admin),
		ks: types.NamespacedName{Namespace: "flux-system", Name: name}}
	s.sts = types.NamespacedName{Namespace: s.ns, Name: "web"}
	first, err := g.PushCommit(ctx, name, map[string]string{
		"base/statefulset.yaml":            fmt.Sprintf(fluxStatefulSet, "1Gi"),
		"base/kustomization.yaml":          fluxKustomizationFile,
		"overlays/prod/kustomization.yaml": overlayKustomization,
	}, "web at 1Gi, from the base")
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.admin.Create(ctx, fluxenv.GitRepository(s.ks.Namespace, name, url, time.Minute)); err != nil {
		t.Fatal(err)
	}
	ks := fluxenv.Kustomization(s.ks.Namespace, name, name, "./overlays/prod")
	ks.Spec.TargetNamespace = s.ns
	if err := cl.admin.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	s.kustomization(first, "Ready", ready)
	pods := settledPods(t, cl, s.sts, ctl)

	fill(t, cl.admin, s.ns, "900Mi", claimNames("web", 2)...)
	// The patch is added to the overlay, every line of it kept; the base
	// is not touched.
	sha := mergeResize(t, sdk, g.User, name, "overlays/prod/kustomization.yaml", nil, []string{
		"", "patches:", "- target:", "kind: StatefulSet", "name: web", "patch: |-", "- op: replace",
		"path: /spec/volumeClaimTemplates/0/spec/resources/requests/storage", "value: 2Gi",
	}, ctl)
	s.grownAfterMerge(sha, "2Gi", pods)
}

func testAutoresizeHelmValues(t *testing.T, cl *cluster, g *giteasrv.Server, sdk *gitea.Client, ctl *controller) {
	ctx := context.Background()
	s, pods := setupHelmScenario(t, cl, g, ctl, "autoresize-helm")
	fill(t, cl.admin, s.sts.Namespace, "900Mi", claimNames("web", 2)...)
	sha := mergeResize(t, sdk, g.User, s.repo, "chart/values.yaml", []string{"size: 1Gi"}, []string{"size: 2Gi"}, ctl)
	if _, err := fluxenv.RequestReconcile(ctx, cl.admin, fluxenv.GitRepository(s.hr.Namespace, s.hr.Name, "", 0)); err != nil {
		t.Fatal(err)
	}
	s.release(sha, "deployed after claimwarden converged the merge", func(hr *helmv2.HelmRelease) bool { return deployed(hr) })
	waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
	after := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.sts, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, cl.admin, after, pods)
	waitStatus(t, g, s.repo, sha, "claimwarden/"+s.sts.Namespace+"/web", "success", "2/2 claims compatible", ctl)
}

// settledPods waits until the StatefulSet's two claims are at 1Gi with
// nothing left to do, and returns its Pods' UIDs.
func settledPods(t *testing.T, cl *cluster, key types.NamespacedName, ctl *controller) map[string]types.UID {
	t.Helper()
	waitRolloutDone(t, cl.admin, key, 2, "1Gi", ctl)
	sts := &appsv1.StatefulSet{}
	if err := cl.admin.Get(context.Background(), key, sts); err != nil {
		t.Fatal(err)
	}
	return podUIDs(t, cl.admin, sts)
}

// helmReleaseManifest is hr as a manifest in Git (no status, no
// creationTimestamp).
func helmReleaseManifest(t *testing.T, hr *helmv2.HelmRelease) string {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hr)
	if err != nil {
		t.Fatal(err)
	}
	delete(obj, "status")
	unstructured.RemoveNestedField(obj, "metadata", "creationTimestamp")
	manifest, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(manifest)
}

// applyHelmRelease pushes files to a new repository, which a Kustomization
// applies into a new namespace (its path ./deploy), and returns the
// namespace and the first commit.
func applyHelmRelease(t *testing.T, cl *cluster, g *giteasrv.Server, name string, files map[string]string) (string, string) {
	t.Helper()
	ctx := context.Background()
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	first, err := g.PushCommit(ctx, name, files, "web at 1Gi, set by the HelmRelease")
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.admin.Create(ctx, fluxenv.GitRepository("flux-system", name, url, time.Minute)); err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, cl.admin)
	bindHelmReleaseSecrets(t, cl, ns)
	ks := fluxenv.Kustomization("flux-system", name, name, "./deploy")
	ks.Spec.TargetNamespace = ns
	if err := cl.admin.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	return ns, first
}

// testAutoresizeHelmRepositoryValues: as testAutoresizeHelmReleaseValues,
// the chart packaged in a Helm repository; on merge helm-controller
// upgrades the same chart version with the new values.
func testAutoresizeHelmRepositoryValues(t *testing.T, cl *cluster, g *giteasrv.Server, sdk *gitea.Client, ctl *controller) {
	ctx := context.Background()
	name := "autoresize-hr-repository"
	chart, err := chartloader.LoadFiles([]*archive.BufferedFile{
		{Name: "Chart.yaml", Data: []byte(strings.Replace(fmt.Sprintf(helmChartFile, "1.0.0"), "name: web", "name: packaged-web", 1))},
		{Name: "values.yaml", Data: []byte(fmt.Sprintf(helmValuesFile, "500Mi"))},
		{Name: "templates/statefulset.yaml", Data: []byte(helmStatefulSetTemplate)},
	})
	if err != nil {
		t.Fatal(err)
	}
	tgz, err := chartutil.Save(chart, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	repoURL, err := g.PushChart(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.admin.Create(ctx, &sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: name},
		Spec: sourcev1.HelmRepositorySpec{URL: repoURL, Interval: metav1.Duration{Duration: time.Minute}}}); err != nil {
		t.Fatal(err)
	}
	hr := fluxenv.HelmRelease("", name, name, "packaged-web")
	hr.Spec.Chart.Spec.SourceRef = helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: name, Namespace: "flux-system"}
	hr.Spec.Chart.Spec.ReconcileStrategy, hr.Spec.Chart.Spec.Version = "", "0.1.0"
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"size":"1Gi"}`)}
	ns, first := applyHelmRelease(t, cl, g, name, map[string]string{"deploy/web.yaml": helmReleaseManifest(t, hr)})
	key := types.NamespacedName{Namespace: ns, Name: name}
	installed := waitHelmRelease(t, cl, key, ctl, first[:8]+" installed", func(hr *helmv2.HelmRelease) bool { return deployed(hr) })
	sts := types.NamespacedName{Namespace: ns, Name: "web"}
	pods := settledPods(t, cl, sts, ctl)

	fill(t, cl.admin, ns, "900Mi", claimNames("web", 2)...)
	sha := mergeResize(t, sdk, g.User, name, "deploy/web.yaml", []string{"size: 1Gi"}, []string{"size: 2Gi"}, ctl)
	if _, err := fluxenv.RequestReconcile(ctx, cl.admin, fluxenv.GitRepository("flux-system", name, "", 0)); err != nil {
		t.Fatal(err)
	}
	waitHelmRelease(t, cl, key, ctl, "upgraded after claimwarden converged the merge", func(hr *helmv2.HelmRelease) bool {
		return deployed(hr) && hr.Status.History.Latest().Version > installed.Status.History.Latest().Version
	})
	waitRolloutDone(t, cl.admin, sts, 2, "2Gi", ctl)
	after := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, sts, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, cl.admin, after, pods)
	waitStatus(t, g, name, sha, "claimwarden/"+ns+"/web", "success", "2/2 claims compatible", ctl)
}

// waitHelmRelease waits until cond holds for HelmRelease key.
func waitHelmRelease(t *testing.T, cl *cluster, key types.NamespacedName, ctl *controller, what string, cond func(*helmv2.HelmRelease) bool) *helmv2.HelmRelease {
	t.Helper()
	hr := &helmv2.HelmRelease{}
	waitFor(t, fmt.Sprintf("HelmRelease %s: %s", key, what), []*controller{ctl}, func(ctx context.Context) (bool, error) {
		if err := cl.admin.Get(ctx, key, hr); err != nil {
			return false, err
		}
		return hr.Status.History.Latest() != nil && cond(hr), nil
	})
	return hr
}

// testAutoresizeHelmReleaseValues: a Kustomization applies a HelmRelease
// whose spec.values sets the size over the chart's default; the pull
// request edits that line of the HelmRelease's manifest, not the chart's
// values.yaml. On merge Flux applies the HelmRelease, helm-controller's
// upgrade fails on the templates, claimwarden converges and nudges it.
func testAutoresizeHelmReleaseValues(t *testing.T, cl *cluster, g *giteasrv.Server, sdk *gitea.Client, ctl *controller) {
	ctx := context.Background()
	name := "autoresize-hr-values"
	hr := fluxenv.HelmRelease("", name, name, "./chart")
	hr.Spec.Chart.Spec.SourceRef.Namespace = "flux-system"
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"size":"1Gi"}`)}
	ns, first := applyHelmRelease(t, cl, g, name, map[string]string{
		"chart/Chart.yaml":                 fmt.Sprintf(helmChartFile, "1.0.0"),
		"chart/values.yaml":                fmt.Sprintf(helmValuesFile, "500Mi"),
		"chart/templates/statefulset.yaml": helmStatefulSetTemplate,
		"deploy/web.yaml":                  helmReleaseManifest(t, hr),
	})
	s := &helmScenario{t: t, cl: cl, g: g, ctl: ctl, repo: name,
		hr: types.NamespacedName{Namespace: ns, Name: name}, sts: types.NamespacedName{Namespace: ns, Name: "web"}}
	s.release(first, "installed", deployed)
	pods := settledPods(t, cl, s.sts, ctl)

	fill(t, cl.admin, ns, "900Mi", claimNames("web", 2)...)
	sha := mergeResize(t, sdk, g.User, name, "deploy/web.yaml", []string{"size: 1Gi"}, []string{"size: 2Gi"}, ctl)
	if _, err := fluxenv.RequestReconcile(ctx, cl.admin, fluxenv.GitRepository("flux-system", name, "", 0)); err != nil {
		t.Fatal(err)
	}
	s.release(sha, "deployed after claimwarden converged the merge", deployed)
	waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
	after := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.sts, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, cl.admin, after, pods)
	waitStatus(t, g, name, sha, "claimwarden/"+ns+"/web", "success", "2/2 claims compatible", ctl)
}
