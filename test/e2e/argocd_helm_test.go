package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/argoenv"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// helmChartPath is the chart's directory in the Git repository.
const helmChartPath = "charts/web"

// helmLabels is the chart's _helpers.tpl: the labels `helm create` puts on
// every object, on the StatefulSet and its claim template. helm.sh/chart and
// app.kubernetes.io/version change with every chart release.
const helmLabels = `{{- define "web.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
`

// helmStatefulSet is the chart's StatefulSet. Size, class, replicas and
// extra claim labels are values; the Pod template carries the selector
// labels only, so a chart release changes the claim template, not the Pods.
const helmStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  labels:
    {{- include "web.labels" . | nindent 4 }}
spec:
  serviceName: web
  replicas: {{ .Values.replicas }}
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
        {{- include "web.labels" . | nindent 8 }}
        {{- with .Values.claimLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: {{ .Values.storageClass }}
      resources:
        requests:
          storage: {{ .Values.size }}
`

// helmChart is the chart's files at a chart version, app version and
// default size. Its default class and replicas are not the test's: the
// Application's values set them, so Pods that run on claims of class sim
// prove Argo CD rendered the chart with them.
func helmChart(version, appVersion, size string) map[string]string {
	return map[string]string{
		helmChartPath + "/Chart.yaml":                 fmt.Sprintf("apiVersion: v2\nname: web\nversion: %s\nappVersion: %q\n", version, appVersion),
		helmChartPath + "/values.yaml":                fmt.Sprintf("replicas: 1\nstorageClass: standard\nsize: %s\nclaimLabels: {}\n", size),
		helmChartPath + "/templates/_helpers.tpl":     helmLabels,
		helmChartPath + "/templates/statefulset.yaml": helmStatefulSet,
	}
}

// helmValues are the Application's values (spec.source.helm.valuesObject).
var helmValues = map[string]any{
	"replicas":     int64(2),
	"storageClass": class,
	"claimLabels":  map[string]any{"team": "storage"},
}

// pushChart commits the chart and makes Argo CD see it at once.
func (s *argoScenario) pushChart(version, appVersion, size, message string) string {
	s.t.Helper()
	ctx := context.Background()
	sha, err := s.g.PushCommit(ctx, s.repo, helmChart(version, appVersion, size), message)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.argo.HardRefresh(ctx, s.cl.admin, s.app.Namespace, s.app.Name); err != nil {
		s.t.Fatal(err)
	}
	return sha
}

// setupArgoHelmScenario is setupArgoScenario for a Helm Application: the chart
// at 0.1.0 (app version 1.0, 1Gi) in Git, the Application's values, synced,
// Pods and claims ready. It returns the live StatefulSet and its Pods.
func setupArgoHelmScenario(t *testing.T, cl *cluster, g *gitea.Server, argo *argoenv.ArgoCD, ctl *controller, name string) (*argoScenario, *appsv1.StatefulSet, map[string]types.UID) {
	ctx := context.Background()
	url, err := g.CreateRepo(ctx, "helm-"+name)
	if err != nil {
		t.Fatal(err)
	}
	s := &argoScenario{t: t, cl: cl, g: g, argo: argo, ctl: ctl, repo: "helm-" + name, ns: namespace(t, cl.admin),
		app: types.NamespacedName{Namespace: argo.Namespace, Name: name}}
	s.sts = types.NamespacedName{Namespace: s.ns, Name: "web"}
	first, err := g.PushCommit(ctx, s.repo, helmChart("0.1.0", "1.0", "1Gi"), "chart web 0.1.0 at 1Gi")
	if err != nil {
		t.Fatal(err)
	}
	app := argo.Application(argoenv.AppSpec{Name: name, RepoURL: url, Path: helmChartPath, DestNamespace: s.ns, Automated: true, HelmValues: helmValues})
	if err := cl.admin.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	s.application(first, "Synced", synced)
	waitRolloutDone(t, cl.admin, s.sts, 2, "1Gi", ctl)
	sts := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.sts, sts); err != nil {
		t.Fatal(err)
	}
	return s, sts, podUIDs(t, cl.admin, sts)
}

// owns reports whether field manager holds label key of pvc.
func owns(pvc *corev1.PersistentVolumeClaim, manager, key string) bool {
	for _, m := range pvc.ManagedFields {
		if m.Manager == manager && m.FieldsV1 != nil && strings.Contains(m.FieldsV1.GetRawString(), `"f:`+key+`":{}`) {
			return true
		}
	}
	return false
}

// converged checks what every chart bump must end with: the StatefulSet
// re-created (the claim template changed), the same Pods, the rollout of
// the Application at sha Ready with no policy denial, and each claim at size
// carrying the chart's labels of version and appVersion and the
// Application's, applied by claimwarden, which leaves out the release's
// app.kubernetes.io/instance (a GitOps tracking key).
func (s *argoScenario) converged(before *appsv1.StatefulSet, pods map[string]types.UID, sha, size, version, appVersion string) {
	t := s.t
	t.Helper()
	// The status on sha comes from its rollout only: a rollout Ready before
	// it (a label-only bump keeps the size) would be the previous one's.
	waitStatus(t, s.g, s.repo, sha, "claimwarden/"+s.ns+"/web", "success", "2/2 claims compatible", s.ctl)
	vcr := waitRolloutDone(t, s.cl.admin, s.sts, 2, size, s.ctl)
	if src := vcr.Status.Proposal.Source; src.Kind != "Application" || src.Namespace != s.app.Namespace || src.Name != s.app.Name || src.Revision != sha {
		t.Errorf("rollout source %+v, want the Application %s at %s", src, s.app, sha)
	}
	if d := describe(vcr); strings.Contains(d, v1alpha1.ReasonPolicyDenied) {
		t.Errorf("rollout %s: %s", s.sts, d)
	}
	want := map[string]string{
		"app.kubernetes.io/version":    appVersion,
		"app.kubernetes.io/managed-by": "Helm",
		"team":                         "storage",
	}
	for _, name := range claimNames("web", 2) {
		pvc := claim(t, s.cl.admin, s.ns, name)
		if request(pvc) != size || capacity(pvc) != size {
			t.Errorf("%s: request %s capacity %s, want %s", name, request(pvc), capacity(pvc), size)
		}
		for k, v := range want {
			if pvc.Labels[k] != v {
				t.Errorf("%s: label %s=%q, want %q from the chart and the Application's values (labels %v)", name, k, pvc.Labels[k], v, pvc.Labels)
			}
		}
		// The StatefulSet controller gave the claim every template label
		// when it created it, the release's instance label too; claimwarden
		// must neither apply nor own it.
		if owns(pvc, "claimwarden", trackingLabel) {
			t.Errorf("%s: claimwarden applied the release's %s; managers: %s", name, trackingLabel, managers(pvc))
		}
		// helm.sh/chart is Helm bookkeeping, never copied (as for a
		// HelmRelease): the claim keeps the chart version it was created at.
		if owns(pvc, "claimwarden", "helm.sh/chart") || pvc.Labels["helm.sh/chart"] == "web-"+version {
			t.Errorf("%s: claimwarden copied helm.sh/chart=%q; managers: %s", name, pvc.Labels["helm.sh/chart"], managers(pvc))
		}
	}
	after := &appsv1.StatefulSet{}
	if err := s.cl.admin.Get(context.Background(), s.sts, after); err != nil {
		t.Fatal(err)
	}
	if after.UID == before.UID {
		t.Errorf("StatefulSet %s was not converged (same UID)", s.sts)
	}
	if got := after.Spec.VolumeClaimTemplates[0].Labels["helm.sh/chart"]; got != "web-"+version {
		t.Errorf("StatefulSet %s claim template helm.sh/chart=%q, want web-%s as Argo CD renders it", s.sts, got, version)
	}
	assertPodsKept(t, s.cl.admin, after, pods)
}

// An Application whose source is a Helm chart in a Git path of the real
// Gitea, with values from the Application, rendered by Argo CD's
// repo-server with the helm CLI: (a) a chart release that raises the
// default size 1Gi to 2Gi converges (claims grown, Pods kept, Application
// Synced, success on the commit); (b) a chart release that changes only the
// claim template's helm.sh/chart and app.kubernetes.io/version labels, the
// most common chart bump, converges the same way with no policy denial and
// no Pod restart, the claims relabelled with app.kubernetes.io/version
// (helm.sh/chart, Helm bookkeeping, is never copied onto claims).
func TestArgoCDHelm(t *testing.T) {
	cl := started(t)
	argo := startArgoCD(t)
	g := startGitea(t)
	ctl := startArgoController(t, cl, argo, g, "helm", argo.Namespace)

	t.Run("size", func(t *testing.T) {
		t.Parallel()
		s, before, pods := setupArgoHelmScenario(t, cl, g, argo, ctl, "chart-size")
		sha := s.pushChart("0.2.0", "1.0", "2Gi", "chart web 0.2.0: default size 2Gi")
		began := time.Now()
		s.application(sha, "Synced after claimwarden converged", synced)
		t.Logf("commit %s synced by Argo CD %v after the push", sha[:8], time.Since(began).Round(time.Millisecond))
		s.converged(before, pods, sha, "2Gi", "0.2.0", "1.0")
	})

	t.Run("labels only", func(t *testing.T) {
		t.Parallel()
		s, before, pods := setupArgoHelmScenario(t, cl, g, argo, ctl, "chart-labels")
		sha := s.pushChart("0.1.1", "1.1", "1Gi", "chart web 0.1.1: app version 1.1")
		began := time.Now()
		s.application(sha, "Synced after claimwarden converged", synced)
		t.Logf("commit %s synced by Argo CD %v after the push", sha[:8], time.Since(began).Round(time.Millisecond))
		s.converged(before, pods, sha, "1Gi", "0.1.1", "1.1")
	})
}
