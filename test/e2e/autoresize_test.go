package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/test/fixtures"

	"code.gitea.io/sdk/gitea"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	giteasrv "github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/promenv"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

// autoresizeCooldown is the autoresize policy's cooldown in these tests:
// long enough to see several checks find nothing to do, short enough to
// see the next proposal after it.
const autoresizeCooldown = 20 * time.Second

// autoresizeConfig writes the controller's configuration: commit statuses
// and pull requests on the Gitea at g (one token, in two Secrets), usage
// from the Prometheus at promURL, every StatefulSet of every namespace
// opted in for the user's repositories, checked every second.
func autoresizeConfig(t *testing.T, cl *cluster, g *giteasrv.Server, promURL string, params ...string) string {
	t.Helper()
	statuses := giteaSecret(t, cl, g.Token, "gitea-status")
	writes := giteaSecret(t, cl, g.Token, "gitea-write")
	body := fmt.Sprintf(`gitStatus:
  hosts:
  - {url: %[1]s, type: gitea, tokenSecretRef: {name: %[2]s}}
policies:
  params:
    autoresize_cooldown_seconds: %[5]d
%[7]sautoresize:
  interval: 1s
  window: 1m
  prometheus: {url: %[3]s}
  namespaces:
  - {namespace: "*", repositoryPrefixes: ["%[1]s/%[6]s"], allStatefulSets: true}
  hosts:
  - {url: %[1]s, type: gitea, tokenSecretRef: {name: %[4]s}}
`, g.URL, statuses, promURL, writes, int(autoresizeCooldown.Seconds()), g.User, paramLines(params))
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// giteaSDK is a Gitea client of g as its user, past any proxy.
func giteaSDK(t *testing.T, g *giteasrv.Server) *gitea.Client {
	t.Helper()
	sdk, err := gitea.NewClient(g.URL, gitea.SetToken(g.Token), gitea.SetHTTPClient(&http.Client{Transport: &http.Transport{Proxy: nil}}))
	if err != nil {
		t.Fatal(err)
	}
	return sdk
}

// paramLines are "key: value" policy parameters as lines of policies.params.
func paramLines(params []string) string {
	var b strings.Builder
	for _, p := range params {
		b.WriteString("    " + p + "\n")
	}
	return b.String()
}

// fill sets how much each of claims holds, in the simulator.
func fill(t *testing.T, c client.Client, ns, used string, claims ...string) {
	t.Helper()
	fillAt(t, c, ns, used, "0", claims...)
}

// fillAt sets how much each of claims holds and how fast it fills (per
// minute), in the simulator.
func fillAt(t *testing.T, c client.Client, ns, used, perMinute string, claims ...string) {
	t.Helper()
	for _, name := range claims {
		pvc := claim(t, c, ns, name)
		patch := client.MergeFrom(pvc.DeepCopy())
		setAnnotation(pvc, storagesim.UsedAnnotation, used)
		setAnnotation(pvc, storagesim.FillPerMinuteAnnotation, perMinute)
		if err := c.Patch(context.Background(), pvc, patch); err != nil {
			t.Fatal(err)
		}
	}
}

func setAnnotation(pvc *corev1.PersistentVolumeClaim, k, v string) {
	if pvc.Annotations == nil {
		pvc.Annotations = map[string]string{}
	}
	pvc.Annotations[k] = v
}

// pullRequests are the repository's pull requests in every state.
func pullRequests(ctx context.Context, sdk *gitea.Client, owner, repo string) ([]*gitea.PullRequest, error) {
	prs, _, err := sdk.ListRepoPullRequests(owner, repo, gitea.ListPullRequestsOptions{State: gitea.StateAll})
	return prs, err
}

// waitPullRequests waits until the repository has n pull requests, the
// newest open, and returns the newest.
func waitPullRequests(t *testing.T, sdk *gitea.Client, owner, repo string, n int, ctl *controller) *gitea.PullRequest {
	t.Helper()
	defer logAutoresizeStatus(t)
	var newest *gitea.PullRequest
	waitFor(t, fmt.Sprintf("pull request %d open in %s", n, repo), []*controller{ctl}, func(ctx context.Context) (bool, error) {
		prs, err := pullRequests(ctx, sdk, owner, repo)
		if err != nil {
			return false, err
		}
		if len(prs) > n {
			return false, fmt.Errorf("%d pull requests, want %d", len(prs), n)
		}
		if len(prs) == n {
			newest = prs[0]
		}
		return len(prs) == n && newest.State == gitea.StateOpen, nil
	})
	return newest
}

// logAutoresizeStatus logs, when t failed, what autoresize last said about
// every StatefulSet of t's namespace.
func logAutoresizeStatus(t *testing.T) {
	if !t.Failed() {
		return
	}
	var list v1alpha1.VolumeClaimRolloutList
	if err := shared.admin.List(context.Background(), &list); err != nil {
		t.Logf("listing the rollouts: %v", err)
		return
	}
	for _, vcr := range list.Items {
		if a := vcr.Status.Autoresize; a != nil {
			t.Logf("%s/%s status.autoresize: %+v", vcr.Namespace, vcr.Name, *a)
		}
	}
}

// autoresizeChecks counts a controller's passes over the opted-in
// StatefulSets of the cluster it runs in.
const autoresizeChecks = `claimwarden_autoresize_checks_total{cluster="in-cluster"}`

// waitChecks waits until ctl has made n checks, and returns how many it has.
func waitChecks(t *testing.T, ctl *controller, n int) int {
	t.Helper()
	var got int
	waitFor(t, fmt.Sprintf("%d autoresize checks", n), []*controller{ctl}, func(context.Context) (bool, error) {
		got = ctl.counter(t, autoresizeChecks)
		return got >= n, nil
	})
	return got
}

// autoresizeStatus waits until the rollout's status.autoresize was written
// after since and cond holds for it. A check that finds what the status
// says writes nothing: since is when what cond waits for changed.
func autoresizeStatus(t *testing.T, c client.Client, key client.ObjectKey, since time.Time, what string, cond func(*v1alpha1.AutoresizeStatus) bool, ctl *controller) *v1alpha1.AutoresizeStatus {
	t.Helper()
	var got *v1alpha1.AutoresizeStatus
	waitFor(t, "status.autoresize: "+what, []*controller{ctl}, func(ctx context.Context) (bool, error) {
		vcr := &v1alpha1.VolumeClaimRollout{}
		if err := c.Get(ctx, key, vcr); err != nil {
			return false, err
		}
		got = vcr.Status.Autoresize
		return got != nil && !got.LastChecked.Time.Before(since.Truncate(time.Second)) && cond(got), nil
	})
	return got
}

// Autoresize end to end on the real control plane, Prometheus, Gitea and
// Flux: (a) the volumes cross the threshold → one pull request whose diff
// is the size line → merged → Flux applies → claims grown, Pods kept,
// success on the merge commit; (d) a pull request closed unmerged is not
// followed by another within the cooldown, and is after it; (f) a
// restarted controller finds its open pull request: still one; (g) a
// commit pushed on top of its branch is removed by a rebuild.
func TestAutoresizeThroughPullRequests(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	startFlux(t)
	g := startGitea(t)
	prom := promenv.StartT(t, time.Second, cl.volumeStats)
	cfg := autoresizeConfig(t, cl, g, prom.URL)
	args := []string{"--flux", "--flux-artifact-cache-dir", t.TempDir(), "--config", cfg}
	ctl := startController(t, cl, "autoresize", args...)
	sdk := giteaSDK(t, g)

	s, pods := setupFluxScenario(t, cl, g, ctl, "autoresize")
	claims := claimNames("web", 2)

	// (a) 900Mi of 1Gi: 88% used, over autoresize_used_percent 80.
	fill(t, cl.admin, s.ns, "900Mi", claims...)
	pr := waitPullRequests(t, sdk, g.User, s.repo, 1, ctl)
	if want := "claimwarden/autoresize/" + s.ns + "/web"; pr.Head == nil || pr.Head.Ref != want || pr.Base == nil || pr.Base.Ref != "main" {
		t.Fatalf("pull request from %+v to %+v, want %s to main", pr.Head, pr.Base, want)
	}
	diff, _, err := sdk.GetPullRequestDiff(g.User, s.repo, pr.Index, gitea.PullRequestDiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if removed, added := fixtures.DiffLines(string(diff)); len(removed) != 1 || len(added) != 1 ||
		strings.TrimSpace(removed[0]) != "storage: 1Gi" || strings.TrimSpace(added[0]) != "storage: 2Gi" {
		t.Errorf("the pull request removes %q and adds %q; want the size line 1Gi → 2Gi only:\n%s", removed, added, diff)
	}
	for _, want := range []string{"data-web-0", "88%", "autoresize", "On merge", "claimwarden/" + s.ns + "/web"} {
		if !strings.Contains(pr.Body, want) {
			t.Errorf("the pull request's body does not say %q:\n%s", want, pr.Body)
		}
	}
	st := autoresizeStatus(t, cl.admin, s.sts, time.Time{}, "the pull request", func(a *v1alpha1.AutoresizeStatus) bool {
		return a.PullRequest == pr.HTMLURL && a.State == "open"
	}, ctl)
	if !strings.HasSuffix(st.Usage, "data-web-0") && !strings.HasSuffix(st.Usage, "data-web-1") || !strings.HasPrefix(st.Usage, "88%") {
		t.Errorf("status.autoresize.usage %q, want 88%% of a claim", st.Usage)
	}

	s.grownAfterMerge(mergePullRequest(t, sdk, g.User, s.repo, pr.Index), "2Gi", pods)
	// The check that saw the grown claims may have written this before the
	// commit status was seen: any time will do, as it said 88% before.
	autoresizeStatus(t, cl.admin, s.sts, time.Time{}, "nothing to grow at 44%", func(a *v1alpha1.AutoresizeStatus) bool {
		return strings.HasPrefix(a.Usage, "44%") && a.State == "merged"
	}, ctl)
	if prs, err := pullRequests(ctx, sdk, g.User, s.repo); err != nil || len(prs) != 1 {
		t.Errorf("%d pull requests (%v) once the merge grew the claims, want the one", len(prs), err)
	}

	// (d) 1843Mi of 2Gi (90%): a second pull request once the merge's
	// cooldown is over; closed unmerged, none within the cooldown.
	fill(t, cl.admin, s.ns, "1843Mi", claims...)
	second := waitPullRequests(t, sdk, g.User, s.repo, 2, ctl)
	closed := gitea.StateClosed
	if _, _, err := sdk.EditPullRequest(g.User, s.repo, second.Index, gitea.EditPullRequestOption{State: &closed}); err != nil {
		t.Fatal(err)
	}
	closedAt := time.Now()
	autoresizeStatus(t, cl.admin, s.sts, closedAt, "the close seen", func(a *v1alpha1.AutoresizeStatus) bool { return a.State == "closed" }, ctl)
	checks := 0
	for done := ctl.counter(t, autoresizeChecks); time.Since(closedAt) < autoresizeCooldown-5*time.Second; checks++ {
		done = waitChecks(t, ctl, done+1)
		if prs, err := pullRequests(ctx, sdk, g.User, s.repo); err != nil || len(prs) != 2 {
			t.Fatalf("%d pull requests (%v) %s after closing one, within the cooldown of %s; want no new one",
				len(prs), err, time.Since(closedAt).Round(time.Second), autoresizeCooldown)
		}
	}
	if checks < 3 {
		t.Errorf("only %d checks within the cooldown", checks)
	}
	third := waitPullRequests(t, sdk, g.User, s.repo, 3, ctl)
	if third.Index == second.Index {
		t.Errorf("the closed pull request %d was reopened, want a new one", second.Index)
	}
	if wait := time.Since(closedAt); wait < autoresizeCooldown {
		t.Errorf("a new pull request %s after the close, within the cooldown of %s", wait.Round(time.Second), autoresizeCooldown)
	}

	// (f) the controller restarts with the pull request open: it finds it,
	// and neither opens another nor pushes to it again. Killed once the
	// status records the commit it made: a branch whose head it has no
	// record of making is rebuilt.
	head := autoresizeStatus(t, cl.admin, s.sts, time.Time{}, "the commit of the open pull request", func(a *v1alpha1.AutoresizeStatus) bool {
		return a.PullRequest == third.HTMLURL && a.Commit != ""
	}, ctl).Commit
	ctl.kill(t)
	restarted := startController(t, cl, "autoresize-restarted", args...)
	// Two checks: the first one ended before the second began.
	waitChecks(t, restarted, 2)
	autoresizeStatus(t, cl.admin, s.sts, time.Time{}, "the open pull request found again", func(a *v1alpha1.AutoresizeStatus) bool {
		return a.PullRequest == third.HTMLURL && a.State == "open"
	}, restarted)
	prs, err := pullRequests(ctx, sdk, g.User, s.repo)
	if err != nil || len(prs) != 3 || prs[0].Index != third.Index || prs[0].Head.Sha != head {
		t.Errorf("after the restart: %d pull requests (%v), newest %d at %s; want %d unchanged at %s", len(prs), err, prs[0].Index, prs[0].Head.Sha, third.Index, head)
	}

	// (g) a commit pushed on top of claimwarden's branch, which leaves the
	// size line as claimwarden wrote it: the branch is rebuilt from the
	// base, the commit gone, and the body says which it was.
	branch := third.Head.Ref
	foreign, err := g.PushCommitTo(ctx, s.repo, branch, map[string]string{"README.md": "not a resize\n"}, "something else")
	if err != nil {
		t.Fatal(err)
	}
	var rebuilt *gitea.PullRequest
	waitFor(t, "the branch rebuilt without the pushed commit", []*controller{restarted}, func(context.Context) (bool, error) {
		pr, _, err := sdk.GetPullRequest(g.User, s.repo, third.Index)
		if err != nil {
			return false, err
		}
		rebuilt = pr
		return pr.Head != nil && pr.Head.Sha != foreign && pr.Head.Sha != head && strings.Contains(pr.Body, "it held commit "+foreign), nil
	})
	rebuiltDiff := prDiffOf(t, sdk, g.User, s.repo, rebuilt.Index)
	if removed, added := fixtures.DiffLines(rebuiltDiff); len(removed) != 1 || len(added) != 1 || !strings.HasPrefix(strings.TrimSpace(added[0]), "storage: ") || strings.Contains(rebuiltDiff, "README.md") {
		t.Errorf("the rebuilt pull request removes %q and adds %q; want the size line only:\n%s", removed, added, rebuiltDiff)
	}
	autoresizeStatus(t, cl.admin, s.sts, time.Time{}, "the rebuilt branch's commit", func(a *v1alpha1.AutoresizeStatus) bool {
		return a.PullRequest == third.HTMLURL && a.Commit == rebuilt.Head.Sha
	}, restarted)
}

func prDiffOf(t *testing.T, sdk *gitea.Client, owner, repo string, number int64) string {
	t.Helper()
	diff, _, err := sdk.GetPullRequestDiff(owner, repo, number, gitea.PullRequestDiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(diff)
}
