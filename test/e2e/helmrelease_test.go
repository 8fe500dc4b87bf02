package e2e

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// The chart each HelmRelease scenario keeps in Git, at chart/. Its claim
// template carries the chart conventions' labels: helm.sh/chart changes
// with every chart version (here every commit: reconcileStrategy Revision
// appends the commit), app.kubernetes.io/version with the appVersion. The
// Pod template's labels stay put, so no upgrade restarts a Pod.
const (
	helmChartFile = `apiVersion: v2
name: web
version: 0.1.0
appVersion: "%s"
`
	helmValuesFile = `size: %s
`
	helmStatefulSetTemplate = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  labels:
    helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 }}
spec:
  serviceName: web
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example/web:1
  volumeClaimTemplates:
  - metadata:
      name: data
      labels:
        helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 }}
        app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: sim
      resources:
        requests:
          storage: {{ .Values.size }}
`
)

// helmScenario is one repository, GitRepository and HelmRelease, all in the
// scenario's namespace (the release's and its storage's too).
type helmScenario struct {
	t    *testing.T
	cl   *cluster
	g    *gitea.Server
	ctl  *controller
	repo string
	hr   types.NamespacedName
	sts  types.NamespacedName
	// first is the commit installed first.
	first string
	// extra are files of the chart pushed with it at every commit.
	extra map[string]string
}

// firstChartLabel is the helm.sh/chart label of the chart installed first.
func (s *helmScenario) firstChartLabel() string {
	return strings.ReplaceAll("web-"+chartVersion(s.first), "+", "_")
}

// push commits the chart at size and appVersion.
func (s *helmScenario) push(size, appVersion, message string) string {
	s.t.Helper()
	files := map[string]string{
		"chart/Chart.yaml":                 fmt.Sprintf(helmChartFile, appVersion),
		"chart/values.yaml":                fmt.Sprintf(helmValuesFile, size),
		"chart/templates/statefulset.yaml": helmStatefulSetTemplate,
	}
	maps.Copy(files, s.extra)
	sha, err := s.g.PushCommit(context.Background(), s.repo, files, message)
	if err != nil {
		s.t.Fatal(err)
	}
	return sha
}

// commit pushes the chart and makes source-controller fetch it at once.
func (s *helmScenario) commit(size, appVersion, message string) string {
	s.t.Helper()
	sha := s.push(size, appVersion, message)
	repo := fluxenv.GitRepository(s.hr.Namespace, s.hr.Name, "", 0)
	if _, err := fluxenv.RequestReconcile(context.Background(), s.cl.admin, repo); err != nil {
		s.t.Fatal(err)
	}
	return sha
}

// chartVersion is the version reconcileStrategy Revision gives the chart at sha.
func chartVersion(sha string) string { return "0.1.0+" + sha[:12] }

// release waits until the HelmRelease's newest release is of the chart at sha
// and cond holds.
func (s *helmScenario) release(sha, what string, cond func(*helmv2.HelmRelease) bool) *helmv2.HelmRelease {
	s.t.Helper()
	hr := &helmv2.HelmRelease{}
	waitFor(s.t, fmt.Sprintf("HelmRelease %s at %s: %s", s.hr, sha[:8], what), []*controller{s.ctl}, func(ctx context.Context) (bool, error) {
		if err := s.cl.admin.Get(ctx, s.hr, hr); err != nil {
			return false, err
		}
		latest := hr.Status.History.Latest()
		return latest != nil && latest.ChartVersion == chartVersion(sha) && cond(hr), nil
	})
	return hr
}

// deployed reports whether the HelmRelease is Ready with its newest release deployed.
func deployed(hr *helmv2.HelmRelease) bool {
	ok, _, _ := fluxenv.Ready(hr)
	return ok && hr.Status.History.Latest().Status == "deployed"
}

// failedOnTemplates reports whether its newest release failed on the claim templates.
func failedOnTemplates(hr *helmv2.HelmRelease) bool {
	ok, _, msg := fluxenv.Ready(hr)
	return !ok && hr.Status.History.Latest().Status == "failed" && converge.IsTemplatesImmutableMessage(msg)
}

// bindHelmReleaseSecrets makes the release records of namespace ns
// readable where config/components/helm says to bind its Secret role: in
// the storage namespace.
func bindHelmReleaseSecrets(t *testing.T, cl *cluster, ns string) {
	t.Helper()
	if err := cl.admin.Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "claimwarden-helm-release-secrets"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "claimwarden-helm-release-secrets"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: controllerNamespace}},
	}); err != nil {
		t.Fatal(err)
	}
}

// setupHelmScenario creates a Gitea repository with the chart at 1Gi (and
// extra files of the chart, if any), a GitRepository and a HelmRelease for
// it, and waits until helm-controller installed it and its Pods and claims
// are ready.
func setupHelmScenario(t *testing.T, cl *cluster, g *gitea.Server, ctl *controller, name string, extra ...map[string]string) (*helmScenario, map[string]types.UID) {
	ctx := context.Background()
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, cl.admin)
	bindHelmReleaseSecrets(t, cl, ns)
	s := &helmScenario{t: t, cl: cl, g: g, ctl: ctl, repo: name, extra: map[string]string{},
		hr: types.NamespacedName{Namespace: ns, Name: name}, sts: types.NamespacedName{Namespace: ns, Name: "web"}}
	for _, files := range extra {
		maps.Copy(s.extra, files)
	}
	s.first = s.push("1Gi", "1.0.0", "web at 1Gi")
	if err := cl.admin.Create(ctx, fluxenv.GitRepository(ns, name, url, time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := cl.admin.Create(ctx, fluxenv.HelmRelease(ns, name, name, "./chart")); err != nil {
		t.Fatal(err)
	}
	s.release(s.first, "installed", deployed)
	sts := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.sts, sts); err != nil {
		t.Fatal(err)
	}
	waitRolloutDone(t, cl.admin, s.sts, 2, "1Gi", ctl)
	return s, podUIDs(t, cl.admin, sts)
}

// The Helm loop with the real source-controller and helm-controller (Helm
// v4, server-side apply), the chart in Git on a real Gitea and the binary as
// its ServiceAccount: (a) a chart bump 1Gi → 2Gi fails in Helm, is
// converged (Pods kept) and the HelmRelease is Ready at the new chart
// version, with success on the commit; (b) a +300% bump is denied: nothing
// touched, the HelmRelease still failing, failure naming max-step on the
// commit; (c) a bump of the claim template's labels alone converges and
// patches the claims' labels, with no policy asked to deny and no restart.
func TestHelmReleaseLoop(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	startFlux(t)
	g := startGitea(t)
	ctl := startController(t, cl, "helm", "--flux-helm-releases",
		"--config", giteaConfig(t, cl, g.URL, g.Token, "gitea-token"))

	t.Run("allowed", func(t *testing.T) {
		t.Parallel()
		s, pods := setupHelmScenario(t, cl, g, ctl, "helm-allowed")
		before := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, before); err != nil {
			t.Fatal(err)
		}
		sha := s.commit("2Gi", "1.0.0", "web at 2Gi (+100%)")
		began := time.Now()
		s.release(sha, "Ready after claimwarden converged", deployed)
		t.Logf("chart %s released by helm-controller %v after the push", chartVersion(sha), time.Since(began).Round(time.Millisecond))
		vcr := waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
		src := vcr.Status.Proposal.Source
		if src.Kind != "HelmRelease" || src.Name != s.hr.Name || src.Chart != "web@"+chartVersion(sha) || src.Revision != "main@sha1:"+sha {
			t.Errorf("rollout source %+v, want the HelmRelease, chart web@%s and commit %s", src, chartVersion(sha), sha)
		}
		for _, name := range claimNames("web", 2) {
			pvc := claim(t, cl.admin, s.sts.Namespace, name)
			if request(pvc) != "2Gi" || capacity(pvc) != "2Gi" {
				t.Errorf("%s: request %s capacity %s, want 2Gi", name, request(pvc), capacity(pvc))
			}
			// The StatefulSet controller labelled the claim when it created it;
			// claimwarden leaves that label as it is.
			if got := pvc.Labels["helm.sh/chart"]; got != s.firstChartLabel() {
				t.Errorf("%s: helm.sh/chart %q, want %q as the claim was created", name, got, s.firstChartLabel())
			}
		}
		after := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, after); err != nil {
			t.Fatal(err)
		}
		if after.UID == before.UID {
			t.Error("the StatefulSet was not converged (same UID)")
		}
		assertPodsKept(t, cl.admin, after, pods)
		waitStatus(t, g, s.repo, sha, "claimwarden/"+s.sts.Namespace+"/web", "success", "2/2 claims compatible", ctl)
		if n := ctl.counter(t, `claimwarden_convergences_total{cluster="in-cluster",result="converged",source="HelmRelease"}`); n < 1 {
			t.Errorf("claimwarden_convergences_total for HelmReleases = %d, want at least this one", n)
		}
	})

	t.Run("denied", func(t *testing.T) {
		t.Parallel()
		s, pods := setupHelmScenario(t, cl, g, ctl, "helm-denied")
		before := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, before); err != nil {
			t.Fatal(err)
		}
		sha := s.commit("4Gi", "1.0.0", "web at 4Gi (+300%)")
		desc := waitStatus(t, g, s.repo, sha, "claimwarden/"+s.sts.Namespace+"/web", "failure", "max-step", ctl)
		if !strings.Contains(desc, "data-web-") {
			t.Errorf("failure %q does not name the claim", desc)
		}
		s.release(sha, "still failing on the immutable templates", failedOnTemplates)
		assertUntouched(t, cl, s.sts, before, pods, "1Gi")
	})

	t.Run("labels", func(t *testing.T) {
		t.Parallel()
		s, pods := setupHelmScenario(t, cl, g, ctl, "helm-labels")
		sha := s.commit("1Gi", "1.1.0", "web 1.1.0: the claim template's labels change, not its size")
		s.release(sha, "Ready after claimwarden converged", deployed)
		waitFor(t, "claims labelled app.kubernetes.io/version=1.1.0", []*controller{ctl}, func(ctx context.Context) (bool, error) {
			for _, name := range claimNames("web", 2) {
				pvc := claim(t, cl.admin, s.sts.Namespace, name)
				if pvc.Labels["app.kubernetes.io/version"] != "1.1.0" {
					return false, nil
				}
				if got := pvc.Labels["helm.sh/chart"]; got != s.firstChartLabel() {
					return false, fmt.Errorf("%s: helm.sh/chart %q, want %q as the claim was created", name, got, s.firstChartLabel())
				}
				if request(pvc) != "1Gi" {
					return false, fmt.Errorf("%s: request %s, want 1Gi", name, request(pvc))
				}
			}
			return true, nil
		})
		waitRolloutDone(t, cl.admin, s.sts, 2, "1Gi", ctl)
		after := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, after); err != nil {
			t.Fatal(err)
		}
		assertPodsKept(t, cl.admin, after, pods)
		waitStatus(t, g, s.repo, sha, "claimwarden/"+s.sts.Namespace+"/web", "success", "2/2 claims compatible", ctl)
	})
}
