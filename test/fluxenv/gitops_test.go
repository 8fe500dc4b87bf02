package fluxenv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// The manifests the test keeps in Git: a namespace, a ConfigMap and a StatefulSet
// whose claim template size is the parameter.
const (
	namespaceYAML = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
`
	configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: shop
data:
  greeting: hello
`
	statefulSetYAML = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: shop
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
        volumeMounts:
        - {name: data, mountPath: /data}
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: %s
`
)

func manifests(size string) map[string]string {
	return map[string]string{
		"namespace.yaml":   namespaceYAML,
		"configmap.yaml":   configMapYAML,
		"statefulset.yaml": fmt.Sprintf(statefulSetYAML, size),
	}
}

// TestGitOpsLoop runs the real loop: Gitea holds the manifests, the real
// source-controller fetches them and the real kustomize-controller applies them to
// the real API server. Then a commit bumps the StatefulSet's claim template, which
// the API server refuses, and the Kustomization reports exactly that.
func TestGitOpsLoop(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Kwok: true})
	flux := fluxenv.StartT(t, env)
	srv := gitea.StartT(t)
	t.Logf("control plane started in %v, flux in %v, gitea in %v",
		env.StartupTime.Round(time.Millisecond), flux.StartupTime.Round(time.Millisecond), srv.StartupTime.Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := client.New(env.Config, client.Options{Scheme: fluxenv.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	cloneURL, err := srv.CreateRepo(ctx, "fleet")
	if err != nil {
		t.Fatal(err)
	}
	sha1, err := srv.PushCommit(ctx, "fleet", manifests("1Gi"), "web with 1Gi claims")
	if err != nil {
		t.Fatal(err)
	}
	rev1 := fluxenv.Branch + "@sha1:" + sha1

	began := time.Now()
	repo := fluxenv.GitRepository(flux.Namespace, "fleet", cloneURL, time.Minute)
	if err := c.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	ks := fluxenv.Kustomization(flux.Namespace, "fleet", "fleet", "./")
	if err := c.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	if err := fluxenv.WaitReady(ctx, c, ks); err != nil {
		t.Fatalf("%v\nflux: %v", err, flux.Exited())
	}
	t.Logf("Kustomization Ready %v after creating the GitRepository", time.Since(began).Round(time.Millisecond))
	// kustomize-controller patches its conditions and the rest of its status
	// in two requests, so Ready can be seen before lastAppliedRevision.
	if err := fluxenv.Until(ctx, c, ks, func() (bool, error) { return ks.Status.LastAppliedRevision == rev1, nil }); err != nil {
		t.Errorf("Kustomization %s/%s status.lastAppliedRevision %q, want %q: %v", ks.Namespace, ks.Name, ks.Status.LastAppliedRevision, rev1, err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(repo), repo); err != nil {
		t.Fatal(err)
	}
	if repo.Status.Artifact == nil || repo.Status.Artifact.Revision != rev1 {
		t.Errorf("GitRepository %s/%s status.artifact %+v, want revision %q", repo.Namespace, repo.Name, repo.Status.Artifact, rev1)
	} else if !strings.HasPrefix(repo.Status.Artifact.URL, "http://"+flux.StorageAddr+"/") {
		t.Errorf("GitRepository %s/%s status.artifact.url %q, want it served from %s", repo.Namespace, repo.Name, repo.Status.Artifact.URL, flux.StorageAddr)
	}

	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web-config"}, &cm); err != nil {
		t.Fatalf("ConfigMap shop/web-config applied by Flux: %v", err)
	}
	if cm.Data["greeting"] != "hello" || cm.Labels["kustomize.toolkit.fluxcd.io/name"] != "fleet" {
		t.Errorf("ConfigMap shop/web-config data %v labels %v, want greeting=hello and the Kustomization's label", cm.Data, cm.Labels)
	}
	assertClaimSize(ctx, t, c, "1Gi")

	// The bump: Git now asks for 2Gi claims, which the API server refuses.
	sha2, err := srv.PushCommit(ctx, "fleet", map[string]string{"statefulset.yaml": fmt.Sprintf(statefulSetYAML, "2Gi")}, "web with 2Gi claims")
	if err != nil {
		t.Fatal(err)
	}
	rev2 := fluxenv.Branch + "@sha1:" + sha2
	pushed := time.Now()
	if _, err := fluxenv.RequestReconcile(ctx, c, repo); err != nil {
		t.Fatal(err)
	}
	err = fluxenv.Until(ctx, c, ks, func() (bool, error) {
		if err := flux.Exited(); err != nil {
			return false, err
		}
		// Ready is Unknown (Progressing) while the attempt runs, and False once it failed.
		return ks.Status.LastAttemptedRevision == rev2 && conditions.IsFalse(ks, meta.ReadyCondition), nil
	})
	if err != nil {
		t.Fatalf("waiting for the Kustomization to fail on %s (lastAttemptedRevision %q): %v", rev2, ks.Status.LastAttemptedRevision, err)
	}
	t.Logf("Kustomization Ready=False %v after the push", time.Since(pushed).Round(time.Millisecond))
	_, reason, message := fluxenv.Ready(ks)
	t.Logf("Ready=False reason %s: %s", reason, message)
	for _, want := range []string{"StatefulSet/shop/web", "spec.volumeClaimTemplates", "field is immutable"} {
		if !strings.Contains(message, want) {
			t.Errorf("Kustomization %s/%s Ready message %q, want it to contain %q", ks.Namespace, ks.Name, message, want)
		}
	}
	if ks.Status.LastAppliedRevision != rev1 {
		t.Errorf("Kustomization %s/%s status.lastAppliedRevision %q after the refused bump, want still %q", ks.Namespace, ks.Name, ks.Status.LastAppliedRevision, rev1)
	}
	assertClaimSize(ctx, t, c, "1Gi")
}

// assertClaimSize checks the live StatefulSet shop/web's claim template request.
func assertClaimSize(ctx context.Context, t *testing.T, c client.Client, want string) {
	t.Helper()
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, &sts); err != nil {
		t.Fatalf("StatefulSet shop/web applied by Flux: %v", err)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("StatefulSet shop/web has %d volumeClaimTemplates, want 1", len(sts.Spec.VolumeClaimTemplates))
	}
	got := sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]
	if got.Cmp(resource.MustParse(want)) != 0 {
		t.Errorf("StatefulSet shop/web spec.volumeClaimTemplates[data].spec.resources.requests.storage %s, want %s", got.String(), want)
	}
}
