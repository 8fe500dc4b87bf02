package argoenv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/argoenv"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	ns      = "shop"
	appName = "shop"
	stsName = "web"
)

// statefulSetYAML is the StatefulSet kept in Git: one template "data" of size on
// no storage class. No PV ever binds its claim, so its Pod stays Pending and Argo
// CD reports the StatefulSet Progressing: enough for what is tested here.
func statefulSetYAML(size string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: %[1]s
spec:
  replicas: 1
  serviceName: %[1]s
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: db
        image: registry.example/db:1
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: ""
      resources:
        requests:
          storage: %[2]s
`, stsName, size)
}

const configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  mode: test
`

// TestTemplateBumpFailsSync runs the whole loop claimwarden meets in an Argo CD
// installation: an Application with automated sync deploys a StatefulSet and a
// ConfigMap from a real Gitea; a commit that grows the StatefulSet's claim
// template then leaves it OutOfSync, its sync failing on the API server's
// "field is immutable", while argocd-server already serves the new template as
// the desired state.
func TestTemplateBumpFailsSync(t *testing.T) {
	began := time.Now()
	giteaSrv := startGitea(t)
	env := testenv.StartT(t, testenv.Options{Kwok: true})
	argo := argoenv.StartT(t, env)
	git := giteaSrv()
	t.Logf("started in %v: control plane %v, Argo CD %v (after it), Gitea %v (alongside)",
		since(began), env.StartupTime.Round(time.Millisecond), argo.StartupTime.Round(time.Millisecond), git.StartupTime.Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fixtures.Namespace(ctx, c, ns); err != nil {
		t.Fatal(err)
	}
	repoURL, err := git.CreateRepo(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	first, err := git.PushCommit(ctx, "shop", map[string]string{"web.yaml": statefulSetYAML("1Gi"), "config.yaml": configMapYAML}, "web with 1Gi")
	if err != nil {
		t.Fatal(err)
	}

	step := time.Now()
	app := argo.Application(argoenv.AppSpec{Name: appName, RepoURL: repoURL, DestNamespace: ns, Automated: true})
	if err := c.Create(ctx, app); err != nil {
		t.Fatalf("create Application %s/%s: %v", argo.Namespace, appName, err)
	}
	synced, err := argo.WaitApp(ctx, c, argo.Namespace, appName, func(u *unstructured.Unstructured) bool {
		s := argoenv.Status(u)
		return s.Sync == "Synced" && s.Revision == first && (s.Health == "Healthy" || s.Health == "Progressing")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first commit synced in %v: %s", since(step), argoenv.Status(synced))

	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: stsName}, &sts); err != nil {
		t.Fatalf("StatefulSet %s/%s after sync: %v", ns, stsName, err)
	}
	if got := templateSize(&sts); got != "1Gi" {
		t.Errorf("StatefulSet %s/%s spec.volumeClaimTemplates[data] storage %q after sync, want 1Gi", ns, stsName, got)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-config"}, &cm); err != nil {
		t.Fatalf("ConfigMap %s/web-config after sync: %v", ns, err)
	}
	if cm.Data["mode"] != "test" {
		t.Errorf("ConfigMap %s/web-config data.mode %q, want test", ns, cm.Data["mode"])
	}

	step = time.Now()
	second, err := git.PushCommit(ctx, "shop", map[string]string{"web.yaml": statefulSetYAML("2Gi")}, "web with 2Gi")
	if err != nil {
		t.Fatal(err)
	}
	if err := argo.HardRefresh(ctx, c, argo.Namespace, appName); err != nil {
		t.Fatal(err)
	}
	failed, err := argo.WaitApp(ctx, c, argo.Namespace, appName, func(u *unstructured.Unstructured) bool {
		s := argoenv.Status(u)
		return s.Sync == "OutOfSync" && s.Revision == second && strings.Contains(s.OperationMessage, "field is immutable")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("template bump refused in %v: %s", since(step), argoenv.Status(failed))

	step = time.Now()
	mr, err := argo.ManagedResource(ctx, appName, "apps", "StatefulSet", ns, stsName)
	if err != nil {
		t.Fatal(err)
	}
	if mr.Target == nil || mr.Live == nil {
		t.Fatalf("managed resource StatefulSet %s/%s: target %v, live %v; want both", ns, stsName, mr.Target != nil, mr.Live != nil)
	}
	if got := unstructuredSize(t, mr.Target); got != "2Gi" {
		t.Errorf("managed resource StatefulSet %s/%s targetState storage %q, want 2Gi (the second commit)", ns, stsName, got)
	}
	if got := unstructuredSize(t, mr.Live); got != "1Gi" {
		t.Errorf("managed resource StatefulSet %s/%s liveState storage %q, want 1Gi (unchanged)", ns, stsName, got)
	}
	if !mr.Modified {
		t.Errorf("managed resource StatefulSet %s/%s: modified false, want true", ns, stsName)
	}
	t.Logf("managed-resources read in %v; whole test %v", since(step), since(began))
}

// startGitea starts Gitea alongside the control plane (they do not depend on
// each other) and returns a function that waits for it. Its cleanup is registered
// first, so it runs after the control plane's and Argo CD's.
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
		if srv == nil {
			return
		}
		if t.Failed() {
			t.Logf("gitea: last log lines:\n%s", srv.LogTail(40))
		}
		if err := srv.Stop(); err != nil {
			t.Error(err)
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

func templateSize(sts *appsv1.StatefulSet) string {
	for _, tpl := range sts.Spec.VolumeClaimTemplates {
		if tpl.Name == "data" {
			q := tpl.Spec.Resources.Requests[corev1.ResourceStorage]
			return q.String()
		}
	}
	return ""
}

// unstructuredSize reads the "data" template's storage from a StatefulSet as
// Argo CD reports it.
func unstructuredSize(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	var sts appsv1.StatefulSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sts); err != nil {
		t.Fatalf("StatefulSet %s from Argo CD: %v", u.GetName(), err)
	}
	return templateSize(&sts)
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }
