package argocd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/argoenv"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// webYAML is the StatefulSet in Git. No node runs its Pod here: what is
// tested is what Argo CD compares and syncs, not the workload.
func webYAML(size string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 1
  serviceName: web
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
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: %s
`, size)
}

// hookYAML is a PreSync hook Job no node ever runs: a sync of its
// Application stays Running, which is how another operation is made to be in
// progress deterministically.
const hookYAML = `apiVersion: batch/v1
kind: Job
metadata:
  name: wait-forever
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: wait
        image: registry.example/wait:1
`

// TestClientAgainstArgoCD runs the API client against a real argocd-server
// and its real answers: the desired StatefulSet before and after a template
// bump, a manual sync pinned to a revision, the sync failure the detection
// reads, a refused second operation, a refresh, the token read from a
// Secret at each call (rotation), and the errors that name what failed. An
// Application of the same name outside Argo CD's namespace (applications in
// any namespace) is read, refreshed and synced apart from it.
func TestClientAgainstArgoCD(t *testing.T) {
	began := time.Now()
	waitGitea := startGitea(t)
	env := testenv.StartT(t, testenv.Options{})
	// No periodic comparison within the test: a refresh is then the only
	// thing that compares an Application again (assertOtherNamespace).
	argo := argoenv.StartTWith(t, env, argoenv.Options{ApplicationNamespaces: []string{teamNamespace}, AppResync: 10 * time.Minute})
	git := waitGitea()
	t.Logf("control plane, Argo CD and Gitea up in %v", time.Since(began).Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"shop", "team-shop", "hooked", "claimwarden-system"} {
		if err := fixtures.Namespace(ctx, c, ns); err != nil {
			t.Fatal(err)
		}
	}
	token, err := argo.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "claimwarden-system", Name: "argocd-token"},
		StringData: map[string]string{"token": token + "\n"},
	}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	api, err := NewClient(ClientOptions{
		Server: argo.ServerURL, Plaintext: true,
		Token: &SecretToken{Reader: c, Secret: client.ObjectKeyFromObject(secret), Key: "token"},
	})
	if err != nil {
		t.Fatal(err)
	}

	repoURL, err := git.CreateRepo(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	first, err := git.PushCommit(ctx, "shop", map[string]string{"web/web.yaml": webYAML("1Gi"), "hooked/job.yaml": hookYAML}, "web at 1Gi")
	if err != nil {
		t.Fatal(err)
	}
	shop := types.NamespacedName{Namespace: argo.Namespace, Name: "shop"}
	if err := c.Create(ctx, argo.Application(argoenv.AppSpec{Name: shop.Name, RepoURL: repoURL, Path: "web", DestNamespace: "shop"})); err != nil {
		t.Fatal(err)
	}
	waitApp := func(what string, cond func(*unstructured.Unstructured) bool) *application {
		t.Helper()
		u, err := argo.WaitApp(ctx, c, shop.Namespace, shop.Name, cond)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		app, err := applicationOf(u)
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	outOfSyncAt := func(sha string) func(*unstructured.Unstructured) bool {
		return func(u *unstructured.Unstructured) bool {
			s := argoenv.Status(u)
			return s.Sync == "OutOfSync" && s.Revision == sha
		}
	}
	app := waitApp("compared at the first commit", outOfSyncAt(first))
	if app.automated() {
		t.Error("a manual Application reads as automated")
	}
	if keys, _ := app.blocked(); len(keys) != 0 {
		t.Errorf("an unsynced manual Application is blocked on %v", keys)
	}

	assertManaged(t, ctx, api, shop, "shop", "1Gi")
	assertOtherNamespace(t, ctx, c, argo, api, repoURL, shop.Name, first)

	// A manual sync pinned to the compared revision creates the StatefulSet.
	if err := api.Sync(ctx, shop, syncRequestFor(app, app.revisions())); err != nil {
		t.Fatal(err)
	}
	waitApp("synced at the first commit", func(u *unstructured.Unstructured) bool {
		s := argoenv.Status(u)
		return s.Sync == "Synced" && s.Revision == first && s.OperationPhase == "Succeeded"
	})

	// The bump: what argocd-server serves, and the failure a sync records.
	second, err := git.PushCommit(ctx, "shop", map[string]string{"web/web.yaml": webYAML("2Gi")}, "web at 2Gi")
	if err != nil {
		t.Fatal(err)
	}
	if err := argo.HardRefresh(ctx, c, shop.Namespace, shop.Name); err != nil {
		t.Fatal(err)
	}
	app = waitApp("compared at the second commit", outOfSyncAt(second))
	if repo, rev := app.provenance(); repo != repoURL || rev != second {
		t.Errorf("provenance() = %q, %q; want %q, %q", repo, rev, repoURL, second)
	}
	assertManaged(t, ctx, api, shop, "shop", "2Gi")
	if err := api.Sync(ctx, shop, syncRequestFor(app, app.revisions())); err != nil {
		t.Fatal(err)
	}
	app = waitApp("the sync of the second commit failed", func(u *unstructured.Unstructured) bool {
		s := argoenv.Status(u)
		return s.Revision == second && (s.OperationPhase == "Failed" || s.OperationPhase == "Error")
	})
	keys, failed := app.blocked()
	if want := (types.NamespacedName{Namespace: "shop", Name: "web"}); len(keys) != 1 || keys[0] != want || !failed {
		t.Errorf("blocked() on Argo CD's failed sync = %v, %t; want [%s], true (operationState: %+v)", keys, failed, want, app.Status.OperationState)
	}

	// A refresh returns once Argo CD compared again.
	before := time.Now().Truncate(time.Second)
	if err := api.Refresh(ctx, shop); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ApplicationGVK)
	if err := c.Get(ctx, shop, u); err != nil {
		t.Fatal(err)
	}
	reconciled, _, _ := unstructured.NestedString(u.Object, "status", "reconciledAt")
	if at, err := time.Parse(time.RFC3339, reconciled); err != nil || at.Before(before) {
		t.Errorf("status.reconciledAt %q after Refresh, want at or after %s", reconciled, before.Format(time.RFC3339))
	}

	// Another operation in progress: a PreSync hook no node runs keeps one going.
	hooked := types.NamespacedName{Namespace: argo.Namespace, Name: "hooked"}
	if err := c.Create(ctx, argo.Application(argoenv.AppSpec{Name: hooked.Name, RepoURL: repoURL, Path: "hooked", DestNamespace: "hooked"})); err != nil {
		t.Fatal(err)
	}
	// Only a hook: nothing to compare, so it is Synced at once.
	if _, err := argo.WaitApp(ctx, c, hooked.Namespace, hooked.Name, func(u *unstructured.Unstructured) bool {
		return argoenv.Status(u).Revision == second
	}); err != nil {
		t.Fatal(err)
	}
	if err := api.Sync(ctx, hooked, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	hu, err := argo.WaitApp(ctx, c, hooked.Namespace, hooked.Name, func(u *unstructured.Unstructured) bool {
		return argoenv.Status(u).OperationPhase == "Running"
	})
	if err != nil {
		t.Fatal(err)
	}
	if happ, err := applicationOf(hu); err != nil || !happ.syncing() {
		t.Errorf("an Application with a Running operation: syncing() false (%v)", err)
	}
	if err := api.Sync(ctx, hooked, SyncRequest{}); !IsOperationInProgress(err) {
		t.Errorf("a second sync while one runs: %v, want another operation in progress", err)
	}

	// The token is read at each call: a rotated Secret applies at once.
	setToken := func(v string) {
		t.Helper()
		secret.StringData = map[string]string{"token": v}
		if err := c.Update(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	setToken("not-a-token")
	_, err = api.ManagedStatefulSets(ctx, shop)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 401 || !strings.Contains(err.Error(), "/api/v1/applications/shop/managed-resources") {
		t.Errorf("with a wrong token: %v, want 401 naming the call", err)
	}
	setToken(token)
	assertManaged(t, ctx, api, shop, "shop", "2Gi")

	// Errors name what failed.
	if _, err := api.ManagedStatefulSets(ctx, types.NamespacedName{Namespace: argo.Namespace, Name: "nope"}); !errors.As(err, &ae) || !strings.Contains(err.Error(), "/api/v1/applications/nope/") {
		t.Errorf("unknown Application: %v, want an API error naming it", err)
	}
	missing := &SecretToken{Reader: c, Secret: types.NamespacedName{Namespace: "claimwarden-system", Name: "gone"}, Key: "token"}
	if _, err := missing.Token(ctx); err == nil || !strings.Contains(err.Error(), "claimwarden-system/gone") {
		t.Errorf("missing Secret: %v, want an error naming it", err)
	}
	wrongKey := &SecretToken{Reader: c, Secret: client.ObjectKeyFromObject(secret), Key: "apiToken"}
	if _, err := wrongKey.Token(ctx); err == nil || !strings.Contains(err.Error(), `key "apiToken"`) {
		t.Errorf("missing key: %v, want an error naming it", err)
	}
	t.Logf("whole test %v", time.Since(began).Round(time.Millisecond))
}

// startGitea starts Gitea alongside the control plane and Argo CD (they do
// not depend on each other) and returns a function that waits for it. Its
// cleanup is registered first, so it runs after theirs.
func startGitea(t *testing.T) func() *gitea.Server {
	dir := t.TempDir()
	done := make(chan struct{})
	var srv *gitea.Server
	var err error
	go func() {
		defer close(done)
		srv, err = gitea.Start(context.Background(), dir)
	}()
	t.Cleanup(func() {
		<-done
		if srv != nil {
			if err := srv.Stop(); err != nil {
				t.Error(err)
			}
		}
	})
	return func() *gitea.Server {
		t.Helper()
		<-done
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
}

// assertManaged checks that argocd-server serves app's StatefulSet web in
// namespace dest with the given template size.
func assertManaged(t *testing.T, ctx context.Context, api *Client, app types.NamespacedName, dest, size string) {
	t.Helper()
	managed, err := api.ManagedStatefulSets(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if want := (types.NamespacedName{Namespace: dest, Name: "web"}); len(managed) != 1 || managed[0].Key != want || managed[0].Target == nil {
		t.Fatalf("Application %s: ManagedStatefulSets = %+v, want %s with a target", app, managed, want)
	}
	q := managed[0].Target.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]
	if q.String() != size {
		t.Errorf("target template size %s, want %s", q.String(), size)
	}
}
