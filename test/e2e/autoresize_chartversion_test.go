package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/test/fluxenv"
	giteasrv "github.com/claimwarden/claimwarden/test/gitea"
)

// testAutoresizeChartVersion: a HelmRelease of a chart in Git under
// Flux's default reconcileStrategy, ChartVersion, with the size in a
// values file beside the chart (spec.chart.spec.valuesFiles).
// source-controller packages the chart anew only for a new version, so the
// pull request edits the values file's size and bumps Chart.yaml's
// version; on merge helm-controller upgrades to that version, the claims
// grow, and the merge commit gets its status.
func testAutoresizeChartVersion(t *testing.T, cl *cluster, g *giteasrv.Server, sdk *gitea.Client, ctl *controller) {
	ctx := context.Background()
	name := "autoresize-chart-version"
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	first, err := g.PushCommit(ctx, name, map[string]string{
		"chart/Chart.yaml":                 fmt.Sprintf(helmChartFile, "1.0.0"),
		"chart/values.yaml":                fmt.Sprintf(helmValuesFile, "500Mi"),
		"chart/templates/statefulset.yaml": helmStatefulSetTemplate,
		"envs/prod/values.yaml":            "# production\n" + fmt.Sprintf(helmValuesFile, "1Gi"),
	}, "web at 1Gi in production's values")
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, cl.admin)
	bindHelmReleaseSecrets(t, cl, ns)
	if err := cl.admin.Create(ctx, fluxenv.GitRepository(ns, name, url, time.Minute)); err != nil {
		t.Fatal(err)
	}
	hr := fluxenv.HelmRelease(ns, name, name, "./chart")
	hr.Spec.Chart.Spec.ReconcileStrategy = "" // the API server's default: ChartVersion
	hr.Spec.Chart.Spec.ValuesFiles = []string{"./envs/prod/values.yaml"}
	if err := cl.admin.Create(ctx, hr); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	waitHelmRelease(t, cl, key, ctl, first[:8]+" installed at chart version 0.1.0", func(hr *helmv2.HelmRelease) bool {
		return deployed(hr) && chartVersionIs(hr.Status.History.Latest().ChartVersion, "0.1.0")
	})
	sts := types.NamespacedName{Namespace: ns, Name: "web"}
	pods := settledPods(t, cl, sts, ctl)

	fill(t, cl.admin, ns, "900Mi", claimNames("web", 2)...)
	pr := checkResize(t, sdk, g.User, name, []string{"chart/Chart.yaml", "envs/prod/values.yaml"},
		[]string{"version: 0.1.0", "size: 1Gi"}, []string{"version: 0.1.1", "size: 2Gi"}, ctl)
	if want := "**Chart version**: `chart/Chart.yaml` goes from 0.1.0 to 0.1.1."; !strings.Contains(pr.Body, want) {
		t.Errorf("the pull request's body does not say %q:\n%s", want, pr.Body)
	}
	sha := mergePullRequest(t, sdk, g.User, name, pr.Index)
	if _, err := fluxenv.RequestReconcile(ctx, cl.admin, fluxenv.GitRepository(ns, name, "", 0)); err != nil {
		t.Fatal(err)
	}
	// The claims grow only if the merge took effect: a values file alone
	// leaves source-controller's artifact up to date.
	waitRolloutDone(t, cl.admin, sts, 2, "2Gi", ctl)
	waitHelmRelease(t, cl, key, ctl, "upgraded to chart version 0.1.1", func(hr *helmv2.HelmRelease) bool {
		return deployed(hr) && chartVersionIs(hr.Status.History.Latest().ChartVersion, "0.1.1")
	})
	after := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, sts, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, cl.admin, after, pods)
	waitStatus(t, g, name, sha, "claimwarden/"+ns+"/web", "success", "2/2 claims compatible", ctl)
}

// chartVersionIs reports whether a release's chart version is want, with
// any build metadata source-controller adds (the HelmChart's generation,
// for values files).
func chartVersionIs(got, want string) bool {
	return got == want || strings.HasPrefix(got, want+"+")
}
