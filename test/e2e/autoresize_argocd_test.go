package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/test/argoenv"
	giteasrv "github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/promenv"
)

// Autoresize of a StatefulSet an Argo CD Application syncs at HEAD (the
// repository's default branch, which the Git host names): the volumes
// cross the threshold → one pull request changing the size line → merged →
// Argo CD's sync fails on the templates → claimwarden converges and syncs
// → claims grown, Pods kept, success on the merge commit. The same for a
// chart whose Application, applied by another (app of apps), sets the
// size in helm.valuesObject: the child's manifest is edited.
func TestAutoresizeArgoCD(t *testing.T) {
	cl := started(t)
	argo := startArgoCD(t)
	g := startGitea(t)
	prom := promenv.StartT(t, time.Second, cl.volumeStats)
	ctl := startController(t, cl, "autoresize-argocd", "--argocd", "--argocd-namespaces", argo.Namespace,
		"--argocd-server", argo.ServerURL, "--argocd-plaintext", "--argocd-token-secret-name", argoTokenSecret(t, cl, argo, "argocd-token-autoresize"),
		"--config", autoresizeConfig(t, cl, g, prom.URL))
	sdk := giteaSDK(t, g)
	t.Run("manifest", func(t *testing.T) {
		t.Parallel()
		s, pods := setupArgoScenario(t, cl, g, argo, ctl, argoApp{name: "autoresize"})
		fill(t, cl.admin, s.ns, "900Mi", claimNames("web", 2)...)
		sha := mergeResize(t, sdk, g.User, s.repo, "statefulset.yaml", []string{"storage: 1Gi"}, []string{"storage: 2Gi"}, ctl)
		s.grownAfterMerge(sha, s.app, pods)
	})
	t.Run("app of apps values", func(t *testing.T) {
		t.Parallel()
		testAutoresizeAppOfApps(t, cl, g, argo, sdk, ctl)
	})
}

// grownAfterMerge makes Argo CD see the merge commit sha on Application
// app and waits until claimwarden converged and synced the Application
// that fails on it, and grew the claims with the Pods kept, with success
// on the commit.
func (s *argoScenario) grownAfterMerge(sha string, app types.NamespacedName, pods map[string]types.UID) {
	t := s.t
	t.Helper()
	ctx := context.Background()
	if err := s.argo.HardRefresh(ctx, s.cl.admin, app.Namespace, app.Name); err != nil {
		t.Fatal(err)
	}
	s.application(sha, "Synced after claimwarden converged the merge and synced", synced)
	waitRolloutDone(t, s.cl.admin, s.sts, 2, "2Gi", s.ctl)
	after := &appsv1.StatefulSet{}
	if err := s.cl.admin.Get(ctx, s.sts, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, s.cl.admin, after, pods)
	waitStatus(t, s.g, s.repo, sha, "claimwarden/"+s.ns+"/web", "success", "2/2 claims compatible", s.ctl)
}

// testAutoresizeAppOfApps: an Application (app of apps) applies the
// Application of a chart whose helm.valuesObject sets the size over the
// chart's default; the pull request edits that line of the child's
// manifest in the parent's path.
func testAutoresizeAppOfApps(t *testing.T, cl *cluster, g *giteasrv.Server, argo *argoenv.ArgoCD, sdk *gitea.Client, ctl *controller) {
	ctx := context.Background()
	s := &argoScenario{t: t, cl: cl, g: g, argo: argo, ctl: ctl, repo: "argo-app-of-apps", ns: namespace(t, cl.admin),
		app: types.NamespacedName{Namespace: argo.Namespace, Name: "aoa-web"}}
	s.sts = types.NamespacedName{Namespace: s.ns, Name: "web"}
	url, err := g.CreateRepo(ctx, s.repo)
	if err != nil {
		t.Fatal(err)
	}
	child := argo.Application(argoenv.AppSpec{Name: s.app.Name, RepoURL: url, Path: "chart", DestNamespace: s.ns, Automated: true,
		HelmValues: map[string]any{"size": "1Gi"}})
	manifest, err := yaml.Marshal(child.Object)
	if err != nil {
		t.Fatal(err)
	}
	first, err := g.PushCommit(ctx, s.repo, map[string]string{
		"chart/Chart.yaml":                 fmt.Sprintf(helmChartFile, "1.0.0"),
		"chart/values.yaml":                fmt.Sprintf(helmValuesFile, "500Mi"),
		"chart/templates/statefulset.yaml": helmStatefulSetTemplate,
		"apps/web.yaml":                    string(manifest),
	}, "web at 1Gi, set by its Application")
	if err != nil {
		t.Fatal(err)
	}
	root := argo.Application(argoenv.AppSpec{Name: "aoa-root", RepoURL: url, Path: "apps", DestNamespace: argo.Namespace, Automated: true})
	if err := cl.admin.Create(ctx, root); err != nil {
		t.Fatal(err)
	}
	s.application(first, "Synced, applied by aoa-root", synced)
	pods := settledPods(t, cl, s.sts, ctl)

	fill(t, cl.admin, s.ns, "900Mi", claimNames("web", 2)...)
	sha := mergeResize(t, sdk, g.User, s.repo, "apps/web.yaml", []string{"size: 1Gi"}, []string{"size: 2Gi"}, ctl)
	if err := argo.HardRefresh(ctx, cl.admin, argo.Namespace, "aoa-root"); err != nil {
		t.Fatal(err)
	}
	s.grownAfterMerge(sha, s.app, pods)
}
