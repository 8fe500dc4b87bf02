package e2e

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/test/argoenv"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// argoStatefulSet is the manifest each scenario keeps in Git, with the
// claim template's size and labels; the Application's destination namespace
// puts it into the scenario's namespace.
const argoStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
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
      labels: {%s}
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: sim
      resources:
        requests:
          storage: %s
`

// argoScenario is one repository, Application and namespace.
type argoScenario struct {
	t    *testing.T
	cl   *cluster
	g    *gitea.Server
	argo *argoenv.ArgoCD
	ctl  *controller
	repo string
	ns   string
	app  types.NamespacedName
	sts  types.NamespacedName
}

// trackingLabel is the label Argo CD's label tracking uses: a template
// holding it must not have it copied onto PVCs, while other template labels are.
const trackingLabel = "app.kubernetes.io/instance"

// manifest is the StatefulSet at size with the claim template labels given
// as YAML flow pairs ("" for none).
func argoManifest(size, labels string) map[string]string {
	return map[string]string{"statefulset.yaml": fmt.Sprintf(argoStatefulSet, labels, size)}
}

// commit pushes the StatefulSet at size and makes Argo CD see it at once
// (a hard refresh: its revision cache would hide the push for minutes).
func (s *argoScenario) commit(size, labels, message string) string {
	s.t.Helper()
	ctx := context.Background()
	sha, err := s.g.PushCommit(ctx, s.repo, argoManifest(size, labels), message)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.argo.HardRefresh(ctx, s.cl.admin, s.app.Namespace, s.app.Name); err != nil {
		s.t.Fatal(err)
	}
	return sha
}

// application waits until the Application has compared sha and cond holds.
func (s *argoScenario) application(sha, what string, cond func(argoenv.AppStatus) bool) argoenv.AppStatus {
	s.t.Helper()
	var st argoenv.AppStatus
	waitFor(s.t, fmt.Sprintf("Application %s at %s: %s", s.app, sha[:8], what), []*controller{s.ctl}, func(ctx context.Context) (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(argoenv.ApplicationGVK)
		if err := s.cl.admin.Get(ctx, s.app, u); err != nil {
			return false, err
		}
		st = argoenv.Status(u)
		if st.Revision != sha || !cond(st) {
			return false, fmt.Errorf("%s", st)
		}
		return true, nil
	})
	return st
}

func synced(st argoenv.AppStatus) bool {
	return st.Sync == "Synced" && st.OperationPhase == "Succeeded"
}

// stillFailing is a sync refused by the API server: the automated sync
// retries it (Running) and finally gives up (Failed), never succeeds.
func stillFailing(st argoenv.AppStatus) bool {
	return st.Sync == "OutOfSync" && st.OperationPhase != "Succeeded" && converge.IsTemplatesImmutableMessage(st.OperationMessage)
}

// argoAppsNamespace is where Argo CD allows Applications besides its own
// namespace ("applications in any namespace").
const argoAppsNamespace = "apps-team"

// argoApp names a scenario's Application. Without retries its automated
// sync gives up at the first failure (by default it retries 5 times); an
// empty namespace is Argo CD's own.
type argoApp struct {
	name, namespace string
	noRetries       bool
}

// setupArgoScenario creates a Gitea repository holding the StatefulSet at
// 1Gi and an Application with automated sync for it, and waits until Argo CD
// synced it and its Pods and claims are ready.
func setupArgoScenario(t *testing.T, cl *cluster, g *gitea.Server, argo *argoenv.ArgoCD, ctl *controller, a argoApp) (*argoScenario, map[string]types.UID) {
	ctx := context.Background()
	url, err := g.CreateRepo(ctx, "argo-"+a.name)
	if err != nil {
		t.Fatal(err)
	}
	s := &argoScenario{t: t, cl: cl, g: g, argo: argo, ctl: ctl, repo: "argo-" + a.name, ns: namespace(t, cl.admin),
		app: types.NamespacedName{Namespace: cmp.Or(a.namespace, argo.Namespace), Name: a.name}}
	s.sts = types.NamespacedName{Namespace: s.ns, Name: "web"}
	first, err := g.PushCommit(ctx, s.repo, argoManifest("1Gi", ""), "web at 1Gi")
	if err != nil {
		t.Fatal(err)
	}
	app := argo.Application(argoenv.AppSpec{Name: a.name, Namespace: s.app.Namespace, RepoURL: url, DestNamespace: s.ns, Automated: true})
	if a.noRetries {
		if err := unstructured.SetNestedField(app.Object, int64(0), "spec", "syncPolicy", "retry", "limit"); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.admin.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	s.application(first, "Synced", synced)
	sts := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.sts, sts); err != nil {
		t.Fatal(err)
	}
	waitRolloutDone(t, cl.admin, s.sts, 2, "1Gi", ctl)
	return s, podUIDs(t, cl.admin, sts)
}

// recoverFailedSync commits the StatefulSet at size while claimwarden is
// held off (claimwarden.dev/ignore on the live object) until the automated
// sync has failed for good (the Application has no retries), then lets it
// converge, and waits until the sync claimwarden starts turns the
// Application Synced. It returns the commit.
func (s *argoScenario) recoverFailedSync(size, message string) string {
	t := s.t
	t.Helper()
	ctx := context.Background()
	ignore := func(value string) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, v1alpha1.IgnoreAnnotation, value)
		sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: s.sts.Namespace, Name: s.sts.Name}}
		if err := s.cl.admin.Patch(ctx, sts, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	ignore(`"true"`)
	sha := s.commit(size, "", message)
	s.application(sha, "the automated sync failed, not retried", func(st argoenv.AppStatus) bool {
		return stillFailing(st) && st.OperationPhase == "Failed"
	})
	ignore("null")
	s.application(sha, "Synced by the sync claimwarden started", synced)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(argoenv.ApplicationGVK)
	if err := s.cl.admin.Get(ctx, s.app, u); err != nil {
		t.Fatal(err)
	}
	op, _, _ := unstructured.NestedMap(u.Object, "status", "operationState", "operation")
	if by, _, _ := unstructured.NestedString(op, "initiatedBy", "username"); by != argoenv.AdminUser || !strings.Contains(fmt.Sprint(op["info"]), "claimwarden converged") {
		t.Errorf("Application %s: the last operation was not claimwarden's sync (as %s): %v", s.app, argoenv.AdminUser, op)
	}
	return sha
}

// The GitOps loop with a real Argo CD (repo-server, application-controller,
// argocd-server), Git on a real Gitea and the binary as its ServiceAccount,
// reading desired StatefulSets through the Argo CD API with a token from a
// Secret: (a) an allowed bump converges the StatefulSet, grows the claims
// without restarting Pods, and the sync claimwarden starts turns the
// Application Synced, with success on the commit; (b) a +300% bump is
// denied: claims untouched, the Application still failing, failure naming
// max-step on the commit; (c) a revert shrinks nothing and says why on its
// commit. (a) runs three times: with Argo CD's default retries of a failed
// automated sync; without, where only claimwarden's sync recovers; and so
// with the Application outside Argo CD's namespace (apps in any namespace).
func TestArgoCDLoop(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	argo := startArgoCD(t)
	g := startGitea(t)
	ctl := startArgoController(t, cl, argo, g, "", argo.Namespace+","+argoAppsNamespace)

	t.Run("allowed", func(t *testing.T) {
		t.Parallel()
		s, pods := setupArgoScenario(t, cl, g, argo, ctl, argoApp{name: "allowed"})
		before := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, before); err != nil {
			t.Fatal(err)
		}
		sha := s.commit("2Gi", "team: storage, "+trackingLabel+": web", "web at 2Gi (+100%), claims labelled")
		began := time.Now()
		s.application(sha, "Synced after claimwarden converged and started a sync", synced)
		t.Logf("commit %s synced by Argo CD %v after the push", sha[:8], time.Since(began).Round(time.Millisecond))
		vcr := waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
		if src := vcr.Status.Proposal.Source; src.Kind != "Application" || src.Namespace != s.app.Namespace || src.Name != s.app.Name || src.Revision != sha {
			t.Errorf("rollout source %+v, want the Application %s at %s", src, s.app, sha)
		}
		for _, name := range claimNames("web", 2) {
			pvc := claim(t, cl.admin, s.ns, name)
			if request(pvc) != "2Gi" || capacity(pvc) != "2Gi" {
				t.Errorf("%s: request %s capacity %s, want 2Gi", name, request(pvc), capacity(pvc))
			}
			if _, leaked := pvc.Labels[trackingLabel]; leaked || pvc.Labels["team"] != "storage" {
				t.Errorf("%s: labels %v, want team=storage from the template and not its %s", name, pvc.Labels, trackingLabel)
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
		waitStatus(t, g, s.repo, sha, "claimwarden/"+s.ns+"/web", "success", "2/2 claims compatible", ctl)
	})

	// Argo CD does not retry an automated sync that failed for a revision:
	// only the sync claimwarden starts after converging brings it to Synced.
	// claimwarden is held off (claimwarden.dev/ignore on the live object)
	// until that sync has failed for good.
	t.Run("allowed after the automated sync failed", func(t *testing.T) {
		t.Parallel()
		s, pods := setupArgoScenario(t, cl, g, argo, ctl, argoApp{name: "noretry", noRetries: true})
		sha := s.recoverFailedSync("2Gi", "web at 2Gi (+100%)")
		waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
		after := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, after); err != nil {
			t.Fatal(err)
		}
		assertPodsKept(t, cl.admin, after, pods)
		waitStatus(t, g, s.repo, sha, "claimwarden/"+s.ns+"/web", "success", "2/2 claims compatible", ctl)
	})

	// Applications in any namespace: the Application is in apps-team, where
	// Argo CD allows them besides its own namespace. Every call claimwarden
	// makes to argocd-server for it (managed-resources, sync) must name that
	// namespace, or Argo CD looks in its own and finds nothing. Held off like
	// the scenario above, so the last sync is claimwarden's.
	t.Run("allowed in another namespace", func(t *testing.T) {
		t.Parallel()
		s, pods := setupArgoScenario(t, cl, g, argo, ctl, argoApp{name: "team", namespace: argoAppsNamespace, noRetries: true})
		before := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, before); err != nil {
			t.Fatal(err)
		}
		sha := s.recoverFailedSync("2Gi", "web at 2Gi (+100%), Application in "+argoAppsNamespace)
		vcr := waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
		if src := vcr.Status.Proposal.Source; src.Kind != "Application" || src.Namespace != argoAppsNamespace || src.Name != s.app.Name || src.Revision != sha {
			t.Errorf("rollout source %+v, want the Application %s at %s", src, s.app, sha)
		}
		for _, name := range claimNames("web", 2) {
			if pvc := claim(t, cl.admin, s.ns, name); request(pvc) != "2Gi" || capacity(pvc) != "2Gi" {
				t.Errorf("%s/%s: request %s capacity %s, want 2Gi", s.ns, name, request(pvc), capacity(pvc))
			}
		}
		after := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, after); err != nil {
			t.Fatal(err)
		}
		if after.UID == before.UID {
			t.Errorf("StatefulSet %s was not converged (same UID)", s.sts)
		}
		assertPodsKept(t, cl.admin, after, pods)
		waitStatus(t, g, s.repo, sha, "claimwarden/"+s.ns+"/web", "success", "2/2 claims compatible", ctl)
	})

	t.Run("denied", func(t *testing.T) {
		t.Parallel()
		s, pods := setupArgoScenario(t, cl, g, argo, ctl, argoApp{name: "denied"})
		before := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, before); err != nil {
			t.Fatal(err)
		}
		sha := s.commit("4Gi", "", "web at 4Gi (+300%)")
		desc := waitStatus(t, g, s.repo, sha, "claimwarden/"+s.ns+"/web", "failure", "max-step", ctl)
		if !strings.Contains(desc, "data-web-") {
			t.Errorf("failure %q does not name the claim", desc)
		}
		s.application(sha, "still failing on the immutable templates", stillFailing)
		assertUntouched(t, cl, s.sts, before, pods, "1Gi")
	})

	t.Run("revert", func(t *testing.T) {
		t.Parallel()
		s, _ := setupArgoScenario(t, cl, g, argo, ctl, argoApp{name: "revert"})
		bumped := s.commit("2Gi", "", "web at 2Gi")
		s.application(bumped, "Synced", synced)
		waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
		before := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, before); err != nil {
			t.Fatal(err)
		}
		pods := podUIDs(t, cl.admin, before)
		revert := s.commit("1Gi", "", `Revert "web at 2Gi"`)
		waitStatus(t, g, s.repo, revert, "claimwarden/"+s.ns+"/web", "failure", "increase-only", ctl)
		s.application(revert, "still failing on the immutable templates", stillFailing)
		assertUntouched(t, cl, s.sts, before, pods, "2Gi")
	})
}

var (
	argoOnce sync.Once
	argoCD   *argoenv.ArgoCD
	argoErr  error
)

// startArgoCD starts Argo CD once per test binary, with Applications
// allowed in argoAppsNamespace as well; it runs until it exits.
// argoTokenSecret stores an argocd-server token in the Secret name of the
// controller's namespace, for --argocd-token-secret-name, and makes the
// token and the admin password secrets no output of the run may contain.
// startArgoController starts the binary reading Argo CD Applications in
// namespaces (comma-separated) through the API with a token from a Secret,
// posting commit statuses to g; suffix keeps its Secrets and log apart from
// another test's ("" for none).
func startArgoController(t *testing.T, cl *cluster, argo *argoenv.ArgoCD, g *gitea.Server, suffix, namespaces string) *controller {
	t.Helper()
	name := func(base string) string { return strings.TrimSuffix(base+"-"+suffix, "-") }
	secret := argoTokenSecret(t, cl, argo, name("argocd-token"))
	return startController(t, cl, name("argocd"), "--argocd", "--argocd-namespaces", namespaces,
		"--argocd-server", argo.ServerURL, "--argocd-plaintext", "--argocd-token-secret-name", secret,
		"--config", giteaConfig(t, cl, g.URL, g.Token, name("gitea-token")))
}

func argoTokenSecret(t *testing.T, cl *cluster, argo *argoenv.ArgoCD, name string) string {
	t.Helper()
	ctx := context.Background()
	token, err := argo.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	useSecret(t, "argocd token", token)
	useSecret(t, "argocd admin password", argo.AdminPassword)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: name},
		StringData: map[string]string{"token": token},
	}
	if err := cl.admin.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	return name
}

func startArgoCD(t *testing.T) *argoenv.ArgoCD {
	t.Helper()
	argoOnce.Do(func() {
		argoCD, argoErr = argoenv.Start(context.Background(), env, argoenv.Options{
			Dir:                   filepath.Join(env.Dir, "argocd"),
			ApplicationNamespaces: []string{argoAppsNamespace},
		})
	})
	if argoErr != nil {
		t.Fatal(argoErr)
	}
	return argoCD
}
