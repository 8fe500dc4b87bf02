package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/argoenv"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/promenv"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// spokeName is claimwarden's name for the spoke, argoSpokeName Argo CD's.
const (
	spokeName     = "eu"
	argoSpokeName = "prod-eu"
)

// startSpoke starts a second control plane with kwok and its own storage
// simulator: a cluster the hub's Argo CD applies to and claimwarden
// converges in, reached only through the credential of its cluster Secret.
// stats is the host:port of the spoke's kubelet-style volume statistics.
func startSpoke(t *testing.T) (spoke *testenv.Env, c client.Client, stats string) {
	t.Helper()
	spoke = testenv.StartT(t, testenv.Options{Kwok: true, CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}})
	c, err := client.New(spoke.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), storagesim.StorageClass(class, true)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	sim := &storagesim.Simulator{Delay: simDelay}
	go func() { done <- sim.Start(ctx, spoke.Config) }()
	srv := httptest.NewServer(sim.MetricsHandler())
	t.Cleanup(func() {
		srv.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the spoke's storage simulator: %v", err)
		}
	})
	return spoke, c, strings.TrimPrefix(srv.URL, "http://")
}

// registerSpoke writes the spoke's Argo CD cluster Secret on the hub (its
// admin credential, as `argocd cluster add` would store a service
// account's) and lets claimwarden's ServiceAccount read that one Secret.
func registerSpoke(t *testing.T, cl *cluster, argo *argoenv.ArgoCD, spoke *testenv.Env) string {
	t.Helper()
	ctx := context.Background()
	conf, err := json.Marshal(map[string]any{"tlsClientConfig": map[string]any{
		"caData": spoke.Config.CAData, "certData": spoke.Config.CertData, "keyData": spoke.Config.KeyData,
	}})
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: argo.Namespace, Name: "cluster-" + argoSpokeName,
			Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		StringData: map[string]string{"name": argoSpokeName, "server": spoke.Config.Host, "config": string(conf)},
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: argo.Namespace, Name: "claimwarden-clusters"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{secret.Name}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: argo.Namespace, Name: "claimwarden-clusters"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: controllerNamespace, Name: serviceAccount}},
	}
	for _, o := range []client.Object{secret, role, binding} {
		if err := cl.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.admin.Delete(context.Background(), o) })
	}
	return secret.Name
}

// TestHubAndSpoke: Argo CD on the hub applies a StatefulSet to a spoke;
// claimwarden on the hub converges the chart bump there (claims grown,
// Pods kept, the rollout on the spoke and none on the hub), Argo CD's
// sync is Synced again, and the commit's status names the spoke. A spoke
// unreachable when claimwarden starts holds up nothing on the hub; one
// whose API server goes down mid-rollout holds up nothing on the hub
// either, and its rollout resumes and completes once it is back. Then
// autoresize grows the spoke's volumes through a pull request, reading
// the spoke's usage from the hub's Prometheus by its cluster label.
func TestHubAndSpoke(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	argo := startArgoCD(t)
	g := startGitea(t)
	spokeEnv, spoke, spokeStats := startSpoke(t)
	secretName := registerSpoke(t, cl, argo, spokeEnv)
	// One Prometheus holds both clusters' kubelet series, each labelled
	// with its cluster as a federation or Thanos would.
	prom := promenv.StartJobsT(t, time.Second,
		promenv.Job{Name: "kubelet", Targets: []string{cl.volumeStats}, Labels: map[string]string{"cluster": "hub"}},
		promenv.Job{Name: "kubelet", Targets: []string{spokeStats}, Labels: map[string]string{"cluster": spokeName}})

	token := argoTokenSecret(t, cl, argo, "argocd-token-spoke")
	config := autoresizeConfig(t, cl, g, prom.URL)
	replaceInFile(t, config, "prometheus: {url: "+prom.URL+"}", "prometheus: {url: "+prom.URL+", clusterLabel: cluster, clusterLabelValue: hub}")
	appendFile(t, config, fmt.Sprintf("clusters:\n- name: %s\n  secretRef: {namespace: %s, name: %s}\n", spokeName, argo.Namespace, secretName))
	// The spoke is unreachable when claimwarden starts: the hub's own
	// rollouts must not wait for it.
	if err := spokeEnv.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	ctl := startController(t, cl, "hub", "--argocd", "--argocd-namespaces", argo.Namespace,
		"--argocd-server", argo.ServerURL, "--argocd-plaintext", "--argocd-token-secret-name", token, "--config", config)

	ns := namespace(t, cl.admin) // the same name on the spoke: a write to the wrong cluster shows
	local := fixtures.StatefulSet(ns, "local", 1, class, "1Gi")
	if err := cl.admin.Create(ctx, local); err != nil {
		t.Fatal(err)
	}
	waitRolloutDone(t, cl.admin, client.ObjectKeyFromObject(local), 1, "1Gi", ctl)
	if err := spokeEnv.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if err := fixtures.Namespace(ctx, spoke, ns); err != nil {
		t.Fatal(err)
	}
	s := &argoScenario{t: t, cl: cl, g: g, argo: argo, ctl: ctl, repo: "argo-spoke", ns: ns,
		app: types.NamespacedName{Namespace: argo.Namespace, Name: "spoke"}, sts: types.NamespacedName{Namespace: ns, Name: "web"}}
	url, err := g.CreateRepo(ctx, s.repo)
	if err != nil {
		t.Fatal(err)
	}
	first, err := g.PushCommit(ctx, s.repo, argoManifest("1Gi", ""), "web at 1Gi")
	if err != nil {
		t.Fatal(err)
	}
	app := argo.Application(argoenv.AppSpec{Name: s.app.Name, RepoURL: url, DestNamespace: ns, Automated: true})
	if err := unstructured.SetNestedStringMap(app.Object, map[string]string{"name": argoSpokeName, "namespace": ns}, "spec", "destination"); err != nil {
		t.Fatal(err)
	}
	if err := cl.admin.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	// Gone before the next test's controllers look: its spoke is not theirs.
	t.Cleanup(func() { removeObject(t, cl, app) })
	s.application(first, "Synced to the spoke", synced)
	waitRolloutDone(t, spoke, s.sts, 2, "1Gi", ctl)
	before := &appsv1.StatefulSet{}
	if err := spoke.Get(ctx, s.sts, before); err != nil {
		t.Fatal(err)
	}
	pods := podUIDs(t, spoke, before)

	for _, step := range []struct {
		size    string
		outage  bool
		message string
	}{
		{"2Gi", false, "web at 2Gi"},
		{"3Gi", true, "web at 3Gi, the spoke's API server down mid-rollout"},
	} {
		sha := s.commit(step.size, "", step.message)
		began := time.Now()
		done := synced
		if step.outage {
			spokeDownMidRollout(t, spokeEnv, spoke, cl, s.sts, local, step.size, ctl)
			// The sync claimwarden starts once the StatefulSet is converged
			// may run while the spoke is down and fail; what counts is that
			// Argo CD then finds the spoke as Git says (Synced), and starts
			// no other sync, as there is nothing left to apply.
			done = func(st argoenv.AppStatus) bool { return st.Sync == "Synced" }
		}
		s.application(sha, "Synced after claimwarden converged the spoke's StatefulSet", done)
		t.Logf("commit %s (%s) synced %v after the push", sha[:8], step.size, time.Since(began).Round(time.Millisecond))
		vcr := waitRolloutDone(t, spoke, s.sts, 2, step.size, ctl)
		if src := vcr.Status.Proposal.Source; src.Kind != "Application" || src.Name != s.app.Name || src.Revision != sha {
			t.Errorf("the spoke's rollout source %+v, want the Application %s at %s", src, s.app, sha)
		}
		for _, name := range claimNames("web", 2) {
			if pvc := claim(t, spoke, ns, name); request(pvc) != step.size || capacity(pvc) != step.size {
				t.Errorf("spoke claim %s: request %s capacity %s, want %s", name, request(pvc), capacity(pvc), step.size)
			}
		}
		after := &appsv1.StatefulSet{}
		if err := spoke.Get(ctx, s.sts, after); err != nil {
			t.Fatal(err)
		}
		assertPodsKept(t, spoke, after, pods)
		waitStatus(t, g, s.repo, sha, "claimwarden/"+spokeName+"/"+ns+"/web", "success", "2/2 claims compatible", ctl)
	}
	if err := cl.admin.Get(ctx, s.sts, &v1alpha1.VolumeClaimRollout{}); !apierrors.IsNotFound(err) {
		t.Errorf("a VolumeClaimRollout %s on the hub (%v); it belongs beside its StatefulSet on the spoke", s.sts, err)
	}
	if err := cl.admin.Get(ctx, s.sts, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("a StatefulSet %s on the hub (%v): something applied or re-created it in the wrong cluster", s.sts, err)
	}
	autoresizeOnSpoke(t, s, spoke, pods)
}

// autoresizeOnSpoke fills the spoke's 3Gi claims of s.sts past the
// threshold and waits for the one pull request, keyed by the spoke and
// naming the spoke's status context, growing them to 4Gi; merged, Argo CD
// syncs it to the spoke, claimwarden converges it there with the Pods
// kept, and the merge commit has success under the spoke's context. A
// namesake on the hub carrying the spoke's tracking-id, filled too, gets
// no pull request: the Application applies to the spoke, not the hub.
func autoresizeOnSpoke(t *testing.T, s *argoScenario, spoke client.Client, pods map[string]types.UID) {
	t.Helper()
	ctx := context.Background()
	sdk := giteaSDK(t, s.g)
	forged := forgedNamesake(t, s, spoke)
	fill(t, spoke, s.ns, "2500Mi", claimNames("web", 2)...)
	pr := checkResize(t, sdk, s.g.User, s.repo, []string{"statefulset.yaml"}, []string{"storage: 3Gi"}, []string{"storage: 4Gi"}, s.ctl)
	if want := "claimwarden/autoresize/" + spokeName + "/" + s.ns + "/web"; pr.Head == nil || pr.Head.Ref != want {
		t.Errorf("the pull request's branch %+v, want %s: the spoke's StatefulSet's", pr.Head, want)
	}
	statusContext := "claimwarden/" + spokeName + "/" + s.ns + "/web"
	if !strings.Contains(pr.Body, statusContext) {
		t.Errorf("the pull request's body does not name the status %s:\n%s", statusContext, pr.Body)
	}
	// The status is written once the check that opened the pull request ends.
	waitFor(t, "the spoke's status.autoresize naming pull request "+pr.HTMLURL, []*controller{s.ctl}, func(ctx context.Context) (bool, error) {
		vcr := &v1alpha1.VolumeClaimRollout{}
		if err := spoke.Get(ctx, s.sts, vcr); err != nil {
			return false, err
		}
		a := vcr.Status.Autoresize
		return a != nil && a.PullRequest == pr.HTMLURL, fmt.Errorf("status.autoresize %+v", a)
	})
	sha := mergePullRequest(t, sdk, s.g.User, s.repo, pr.Index)
	if err := s.argo.HardRefresh(ctx, s.cl.admin, s.app.Namespace, s.app.Name); err != nil {
		t.Fatal(err)
	}
	s.application(sha, "Synced after claimwarden converged the autoresize merge on the spoke", synced)
	waitRolloutDone(t, spoke, s.sts, 2, "4Gi", s.ctl)
	after := &appsv1.StatefulSet{}
	if err := spoke.Get(ctx, s.sts, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, spoke, after, pods)
	waitStatus(t, s.g, s.repo, sha, statusContext, "success", "2/2 claims compatible", s.ctl)
	if prs, err := pullRequests(ctx, sdk, s.g.User, s.repo); err != nil || len(prs) != 1 {
		t.Errorf("%d pull requests (%v), want the spoke's one: the hub's namesake got one", len(prs), err)
	}
	if err := s.cl.admin.Delete(ctx, forged); err != nil {
		t.Error(err)
	}
}

// forgedNamesake creates on the hub a StatefulSet named as s.sts with the
// spoke's annotations (Argo CD's tracking-id), its claim full, and waits
// until autoresize refuses it: the Application named applies to the spoke.
func forgedNamesake(t *testing.T, s *argoScenario, spoke client.Client) *appsv1.StatefulSet {
	t.Helper()
	ctx := context.Background()
	live := &appsv1.StatefulSet{}
	if err := spoke.Get(ctx, s.sts, live); err != nil {
		t.Fatal(err)
	}
	forged := fixtures.StatefulSet(s.ns, s.sts.Name, 1, class, "1Gi")
	forged.Annotations = live.Annotations
	if err := s.cl.admin.Create(ctx, forged); err != nil {
		t.Fatal(err)
	}
	waitRolloutDone(t, s.cl.admin, s.sts, 1, "1Gi", s.ctl)
	fill(t, s.cl.admin, s.ns, "900Mi", claimNames("web", 1)...)
	const want = "applies to cluster " + spokeName + ", not the cluster claimwarden runs in"
	waitFor(t, "autoresize refusing the hub's namesake", []*controller{s.ctl}, func(ctx context.Context) (bool, error) {
		vcr := &v1alpha1.VolumeClaimRollout{}
		if err := s.cl.admin.Get(ctx, s.sts, vcr); err != nil {
			return false, err
		}
		a := vcr.Status.Autoresize
		return a != nil && strings.Contains(a.Message, want) && strings.HasPrefix(a.Usage, "8"), fmt.Errorf("status.autoresize %+v", a)
	})
	return forged
}

// replaceInFile replaces old, which must be there, with new in the file at path.
func replaceInFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not hold %q:\n%s", path, old, b)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// spokeDownMidRollout stops the spoke's API server once its rollout of
// sts to size patches claims, rolls out the hub's StatefulSet local
// meanwhile (the hub keeps serving), and starts the spoke's again.
func spokeDownMidRollout(t *testing.T, spokeEnv *testenv.Env, spoke client.Client, cl *cluster, sts types.NamespacedName, local *appsv1.StatefulSet, size string, ctl *controller) {
	t.Helper()
	ctx := context.Background()
	waitFor(t, "the spoke's rollout of "+sts.String()+" to "+size+" patching claims", []*controller{ctl}, func(ctx context.Context) (bool, error) {
		vcr := &v1alpha1.VolumeClaimRollout{}
		if err := spoke.Get(ctx, sts, vcr); err != nil {
			return false, err
		}
		for _, c := range vcr.Status.Claims {
			if c.To == size && (c.Phase == v1alpha1.ClaimPatching || c.Phase == v1alpha1.ClaimResizing) {
				return true, nil
			}
		}
		return false, fmt.Errorf("status: %s", describe(vcr))
	})
	if err := spokeEnv.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	if err := fixtures.ReplaceTemplates(ctx, cl.admin, client.ObjectKeyFromObject(local), fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	waitRolloutDone(t, cl.admin, client.ObjectKeyFromObject(local), 1, "2Gi", ctl)
	if err := spokeEnv.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("the spoke's API server was down for %v mid-rollout; the hub's own rollout ran meanwhile", time.Since(down).Round(time.Millisecond))
}

// removeObject deletes obj from the hub and waits until it is gone (a
// Flux object's finalizer first undoes what it applied).
func removeObject(t *testing.T, cl *cluster, obj client.Object) {
	t.Helper()
	if err := cl.admin.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	waitFor(t, fmt.Sprintf("%T %s/%s gone", obj, obj.GetNamespace(), obj.GetName()), nil, func(ctx context.Context) (bool, error) {
		err := cl.admin.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}
