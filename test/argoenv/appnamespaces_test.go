package argoenv_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/argoenv"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// TestApplicationNamespaces starts Argo CD with applications in any namespace
// for "apps-team": an Application there syncs (tracked under its namespace),
// argocd-server answers for it with ?appNamespace=, and refuses a namespace
// not listed.
func TestApplicationNamespaces(t *testing.T) {
	const appsNS, dest = "apps-team", "team-shop"
	began := time.Now()
	giteaSrv := startGitea(t)
	env := testenv.StartT(t, testenv.Options{})
	argo := argoenv.StartTWith(t, env, argoenv.Options{ApplicationNamespaces: []string{appsNS}})
	git := giteaSrv()
	t.Logf("started in %v: control plane %v, Argo CD %v (after it), Gitea %v (alongside)",
		since(began), env.StartupTime.Round(time.Millisecond), argo.StartupTime.Round(time.Millisecond), git.StartupTime.Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	proj := &unstructured.Unstructured{}
	proj.SetGroupVersionKind(argoenv.AppProjectGVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: argo.Namespace, Name: argoenv.DefaultProject}, proj); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedStringSlice(proj.Object, "spec", "sourceNamespaces"); !reflect.DeepEqual(got, []string{appsNS}) {
		t.Errorf("AppProject %s/%s spec.sourceNamespaces %v, want [%s]", argo.Namespace, argoenv.DefaultProject, got, appsNS)
	}
	if err := fixtures.Namespace(ctx, c, dest); err != nil {
		t.Fatal(err)
	}
	repoURL, err := git.CreateRepo(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	sha, err := git.PushCommit(ctx, "team", map[string]string{"config.yaml": configMapYAML}, "config")
	if err != nil {
		t.Fatal(err)
	}

	step := time.Now()
	app := argo.Application(argoenv.AppSpec{Name: appName, Namespace: appsNS, RepoURL: repoURL, DestNamespace: dest, Automated: true})
	if err := c.Create(ctx, app); err != nil {
		t.Fatalf("create Application %s/%s: %v", appsNS, appName, err)
	}
	synced, err := argo.WaitApp(ctx, c, appsNS, appName, func(u *unstructured.Unstructured) bool {
		s := argoenv.Status(u)
		return s.Sync == "Synced" && s.Revision == sha && s.Health == "Healthy"
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Application %s/%s synced in %v: %s", appsNS, appName, since(step), argoenv.Status(synced))

	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "web-config"}, &cm); err != nil {
		t.Fatalf("ConfigMap %s/web-config after sync: %v", dest, err)
	}
	// An Application outside Argo CD's namespace is tracked as <namespace>_<name>.
	if id, want := cm.Annotations["argocd.argoproj.io/tracking-id"], appsNS+"_"+appName+":"; !strings.HasPrefix(id, want) {
		t.Errorf("ConfigMap %s/web-config tracking-id %q, want it to start with %q", dest, id, want)
	}

	var got unstructured.Unstructured
	path := "/api/v1/applications/" + appName + "?" + url.Values{"appNamespace": {appsNS}}.Encode()
	if err := argo.API(ctx, http.MethodGet, path, nil, &got.Object); err != nil {
		t.Fatal(err)
	}
	if got.GetNamespace() != appsNS || got.GetName() != appName {
		t.Errorf("GET %s answered Application %s/%s", path, got.GetNamespace(), got.GetName())
	}
	// An Application in a namespace not listed exists for the API server but
	// not for Argo CD: argocd-server keeps to --application-namespaces (and
	// says "permission denied", as for an Application it does not have).
	stray := argo.Application(argoenv.AppSpec{Name: "stray", Namespace: dest, RepoURL: repoURL, DestNamespace: dest})
	if err := c.Create(ctx, stray); err != nil {
		t.Fatalf("create Application %s/stray: %v", dest, err)
	}
	other := "/api/v1/applications/stray?" + url.Values{"appNamespace": {dest}}.Encode()
	var apiErr *argoenv.APIError
	if err := argo.API(ctx, http.MethodGet, other, nil, nil); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusForbidden {
		t.Errorf("GET %s: %v, want 403: %s is not among the application namespaces", other, err, dest)
	}
}
