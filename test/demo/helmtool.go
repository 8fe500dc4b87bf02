package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fluxenv"
)

// The helm story's HelmRelease, in fluxNamespace, releases the chart at
// chartPath of the repository into the demo namespace. helm-controller
// names the release <targetNamespace>-<name> and keeps its records in
// fluxNamespace.
const (
	helmReleaseName = stsName
	chartPath       = "chart"
)

// chartVersions are the chart's versions in the story: each commit bumps
// the version with the claims' size, as a chart's maintainer would.
var chartVersions = map[string]string{sizeBefore: "0.1.0", sizeAfter: "0.2.0", sizeDenied: "0.3.0"}

// Release states as Helm records them.
const (
	releaseDeployed = "deployed"
	releaseFailed   = "failed"
)

const chartYAML = `apiVersion: v2
name: db
version: %s
`

// helmTool is the helm side of the GitOps story: a GitRepository and a
// HelmRelease release the chart in the repository, with helm-controller's
// default remediation (none: a failed upgrade stays failed until asked
// again). Unlike kustomize-controller and Argo CD, helm-controller always
// fails first: claimwarden acts on a HelmRelease only once its newest
// release failed on the claim templates, reading the desired StatefulSet
// from that release's record.
type helmTool struct{}

func (helmTool) name() string { return "helm-controller" }

// files are the chart: the story's StatefulSet with its claims' size a value.
func (helmTool) files(o options, size string) map[string]string {
	return map[string]string{
		chartPath + "/Chart.yaml":                 fmt.Sprintf(chartYAML, chartVersions[size]),
		chartPath + "/values.yaml":                "size: " + size + "\n",
		chartPath + "/templates/statefulset.yaml": fmt.Sprintf(statefulSetYAML, o.replicas, storageClass, "{{ .Values.size }}"),
	}
}

func (helmTool) deploy(ctx context.Context, cl *cluster, url, sha string, out *printer) error {
	out.cmd(fmt.Sprintf("flux create source git %s --url=%s --branch=%s --interval=1m", repoName, url, fluxenv.Branch))
	out.cmd(fmt.Sprintf("flux create helmrelease %s --source=GitRepository/%s --chart=./%s --reconcile-strategy=Revision --target-namespace=%s",
		helmReleaseName, repoName, chartPath, namespace))
	out.note("reconcileStrategy Revision: every commit is released, its chart version suffixed with +<commit>.")
	start := time.Now()
	if err := cl.client.Create(ctx, fluxenv.GitRepository(fluxNamespace, repoName, url, time.Minute)); err != nil {
		return err
	}
	hr := fluxenv.HelmRelease(fluxNamespace, helmReleaseName, repoName, "./"+chartPath)
	hr.Spec.TargetNamespace = namespace
	if err := cl.client.Create(ctx, hr); err != nil {
		return err
	}
	hr, err := waitHelmRelease(ctx, cl, readyTimeout, func(hr *helmv2.HelmRelease) bool { return releasedFrom(hr, sha) })
	if err != nil {
		return fmt.Errorf("waiting for helm-controller to release the chart of %s: %w", short(sha), err)
	}
	out.ok(fmt.Sprintf("helmrelease/%s Ready after %s: release %s", helmReleaseName, since(start), release(hr.Status.History.Latest())))
	return nil
}

// fetch is Flux's: the HelmChart is built again when the GitRepository has
// a new commit, and helm-controller upgrades when the HelmChart has a new version.
func (helmTool) fetch(ctx context.Context, cl *cluster, out *printer) error {
	return fluxTool{}.fetch(ctx, cl, out)
}

func (helmTool) watch() source {
	return source{list: &helmv2.HelmReleaseList{}, opts: named(fluxNamespace, helmReleaseName)}
}

// show prints each distinct state of the HelmRelease (its Ready condition
// and newest release), and claimwarden's request to upgrade again when it
// is made after the push.
func (helmTool) show(t *timeline, obj client.Object) {
	hr, ok := obj.(*helmv2.HelmRelease)
	if !ok {
		return
	}
	if token := upgradeRequest(hr); token != "" && token != t.nudged && requestedAfter(token, t.began) {
		t.nudged = token
		t.line(fmt.Sprintf("helmrelease/%s  claimwarden asks helm-controller to upgrade again: %s, %s and %s set",
			hr.Name, meta.ReconcileRequestAnnotation, helmv2.ResetRequestAnnotation, helmv2.ForceRequestAnnotation))
	}
	c := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReadyCondition)
	latest := hr.Status.History.Latest()
	if c == nil || latest == nil {
		return
	}
	if fromCommit(latest, t.sha) {
		switch {
		case failedOnTemplates(hr) && t.failed == 0:
			t.failed = since(t.began)
		case releasedFrom(hr, t.sha) && t.applied == 0:
			t.applied = since(t.began)
			t.released = latest.ChartName + "@" + latest.ChartVersion
		}
	}
	if halfStatus(c, latest, t.sha) {
		return
	}
	key := strings.Join([]string{string(c.Status), c.Reason, c.Message, release(latest)}, "\n")
	if key == t.toolLast {
		return
	}
	t.toolLast = key
	status := t.out.paint(green, "Ready=True")
	if c.Status != metav1.ConditionTrue {
		status = t.out.paint(red, "Ready="+string(c.Status))
	}
	t.line(fmt.Sprintf("helmrelease/%s  %s  %s  (release %s)", hr.Name, status, c.Reason, release(latest)),
		wrapQuote(t.out, shortSHAs(elideValue(c.Message)))...)
}

// halfStatus reports whether the Ready condition c with the newest release
// is not news. helm-controller writes Ready before the history, so a
// release's outcome is news only once the history has the release of the
// chart of sha: Ready=True with it deployed (before, Ready=True is the state
// before the push, or half a status), a failed install or upgrade with it
// failed.
func halfStatus(c *metav1.Condition, latest *helmv2.Snapshot, sha string) bool {
	switch {
	case c.Status == metav1.ConditionTrue:
		return !fromCommit(latest, sha) || latest.Status != releaseDeployed
	case c.Reason == helmv2.UpgradeFailedReason || c.Reason == helmv2.InstallFailedReason:
		return !fromCommit(latest, sha) || latest.Status != releaseFailed
	}
	return false
}

// firstNote: claimwarden reads the desired StatefulSet from the failed
// release's record, so helm-controller cannot but fail first; the timeline
// missing it means the watch missed a version of the HelmRelease.
func (helmTool) firstNote(t *timeline) string {
	return fmt.Sprintf("helm-controller's failed upgrade to the chart of %s did not show above, though claimwarden acted on it "+
		"(its history has it: kubectl get helmrelease %s -n %s -o yaml)", short(t.sha), helmReleaseName, fluxNamespace)
}

func (helmTool) appliedNote(t *timeline) string {
	return fmt.Sprintf("helm-controller upgraded to chart %s: helmrelease/%s Ready again", t.released, helmReleaseName)
}

func (helmTool) verdict(t *timeline) string {
	switch {
	case t.failed > 0 && t.nudged != "":
		return "failed, then upgraded when claimwarden asked"
	case t.failed > 0:
		return "failed, then upgraded"
	}
	return "upgraded"
}

// stillFailing: with no retries helm-controller leaves the failed release
// as it is, the release before it still deployed, until Git changes or
// someone asks for an upgrade.
func (helmTool) stillFailing(ctx context.Context, cl *cluster, sha, applied string, out *printer) error {
	var deployed *helmv2.Snapshot
	hr, err := waitHelmRelease(ctx, cl, deniedTimeout, func(hr *helmv2.HelmRelease) bool {
		deployed = nil
		for _, s := range hr.Status.History {
			if s.Status == releaseDeployed && fromCommit(s, applied) {
				deployed = s
			}
		}
		return failedOnTemplates(hr) && fromCommit(hr.Status.History.Latest(), sha) && deployed != nil
	})
	if err != nil {
		return fmt.Errorf("waiting for helm-controller to fail on the chart of %s with that of %s still deployed: %w", short(sha), short(applied), err)
	}
	out.ok(fmt.Sprintf("helmrelease/%s still Ready=False: release %s; release %s", helmReleaseName, release(hr.Status.History.Latest()), release(deployed)))
	return nil
}

// release names a release of the HelmRelease's history: name, version,
// chart and state.
func release(s *helmv2.Snapshot) string {
	return fmt.Sprintf("%s.v%d %s@%s %s", s.Name, s.Version, s.ChartName, shortSHAs(s.ChartVersion), s.Status)
}

// fromCommit reports whether the release is of the chart built from commit
// sha: reconcileStrategy Revision versions it <version>+<sha's first 12>.
func fromCommit(s *helmv2.Snapshot, sha string) bool {
	return s != nil && strings.HasSuffix(s.ChartVersion, "+"+sha[:12])
}

// releasedFrom reports whether the HelmRelease is Ready with its newest
// release, of the chart of sha, deployed.
func releasedFrom(hr *helmv2.HelmRelease, sha string) bool {
	ok, _, _ := fluxenv.Ready(hr)
	latest := hr.Status.History.Latest()
	return ok && fromCommit(latest, sha) && latest.Status == releaseDeployed
}

// failedOnTemplates reports whether the HelmRelease's newest release failed
// with the API server's refusal to change volumeClaimTemplates.
func failedOnTemplates(hr *helmv2.HelmRelease) bool {
	ok, _, msg := fluxenv.Ready(hr)
	latest := hr.Status.History.Latest()
	return !ok && latest != nil && latest.Status == releaseFailed && strings.Contains(msg, immutable)
}

// upgradeRequest is the token of the request to upgrade again (resetAt)
// when claimwarden made it: its field manager wrote the annotation.
func upgradeRequest(hr *helmv2.HelmRelease) string {
	token := hr.Annotations[helmv2.ResetRequestAnnotation]
	if token == "" {
		return ""
	}
	for _, m := range hr.ManagedFields {
		if m.Manager == v1alpha1.ControllerName && strings.Contains(m.FieldsV1.GetRawString(), helmv2.ResetRequestAnnotation) {
			return token
		}
	}
	return ""
}

// requestedAfter reports whether the request token (a time, as claimwarden
// writes it) is later than t: the request of an earlier step is not news.
func requestedAfter(token string, t time.Time) bool {
	at, err := time.Parse(time.RFC3339Nano, token)
	return err == nil && at.After(t)
}

// waitHelmRelease polls the story's HelmRelease until done says so.
func waitHelmRelease(ctx context.Context, cl *cluster, timeout time.Duration, done func(*helmv2.HelmRelease) bool) (*helmv2.HelmRelease, error) {
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: fluxNamespace, Name: helmReleaseName}}
	return hr, waitFlux(ctx, cl, timeout, hr, done)
}
