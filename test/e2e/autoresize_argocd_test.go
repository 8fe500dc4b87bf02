package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/claimwarden/claimwarden/test/promenv"
)

// Autoresize of a StatefulSet an Argo CD Application syncs at HEAD (the
// repository's default branch, which the Git host names): the volumes
// cross the threshold → one pull request changing the size line → merged →
// Argo CD's sync fails on the templates → claimwarden converges and syncs
// → claims grown, Pods kept, success on the merge commit.
func TestAutoresizeArgoCD(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	argo := startArgoCD(t)
	g := startGitea(t)
	prom := promenv.StartT(t, time.Second, cl.volumeStats)
	ctl := startController(t, cl, "autoresize-argocd", "--argocd", "--argocd-namespaces", argo.Namespace,
		"--argocd-server", argo.ServerURL, "--argocd-plaintext", "--argocd-token-secret-name", argoTokenSecret(t, cl, argo, "argocd-token-autoresize"),
		"--config", autoresizeConfig(t, cl, g, prom.URL))
	sdk, err := gitea.NewClient(g.URL, gitea.SetToken(g.Token), gitea.SetHTTPClient(&http.Client{Transport: &http.Transport{Proxy: nil}}))
	if err != nil {
		t.Fatal(err)
	}
	s, pods := setupArgoScenario(t, cl, g, argo, ctl, argoApp{name: "autoresize"})

	fill(t, cl.admin, s.ns, "900Mi", claimNames("web", 2)...)
	sha := mergeResize(t, sdk, g.User, s.repo, []string{"storage: 1Gi"}, []string{"storage: 2Gi"}, ctl)
	if err := argo.HardRefresh(ctx, cl.admin, s.app.Namespace, s.app.Name); err != nil {
		t.Fatal(err)
	}
	s.application(sha, "Synced after claimwarden converged the merge and synced", synced)
	waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
	after := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.sts, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, cl.admin, after, pods)
	waitStatus(t, g, s.repo, sha, "claimwarden/"+s.ns+"/web", "success", "2/2 claims compatible", ctl)
}
