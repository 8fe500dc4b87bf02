package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/fluxenv"
)

// fluxNamespace holds the GitRepository and the Kustomization, both named
// repoName.
const fluxNamespace = "flux-system"

const kustomizationYAML = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- statefulset.yaml
`

// fluxTool is the Flux side of the GitOps story: a GitRepository and a
// Kustomization apply the repository into the demo namespace.
type fluxTool struct{}

func (fluxTool) name() string { return "Flux" }

func (fluxTool) files(o options, size string) map[string]string {
	files := statefulSetFile(o, size)
	files["kustomization.yaml"] = kustomizationYAML
	return files
}

func (fluxTool) deploy(ctx context.Context, cl *cluster, url, sha string, out *printer) error {
	out.cmd(fmt.Sprintf("flux create source git %s --url=%s --branch=%s --interval=1m", repoName, url, fluxenv.Branch))
	out.cmd(fmt.Sprintf("flux create kustomization %s --source=GitRepository/%s --path=./ --prune=true --target-namespace=%s", repoName, repoName, namespace))
	start := time.Now()
	if err := cl.client.Create(ctx, fluxenv.GitRepository(fluxNamespace, repoName, url, time.Minute)); err != nil {
		return err
	}
	ks := fluxenv.Kustomization(fluxNamespace, repoName, repoName, "./")
	ks.Spec.TargetNamespace = namespace
	if err := cl.client.Create(ctx, ks); err != nil {
		return err
	}
	if err := waitKustomization(ctx, cl, readyTimeout, func(ks *kustomizev1.Kustomization) bool {
		ok, _, _ := fluxenv.Ready(ks)
		return ok && ks.Status.LastAppliedRevision == revision(sha)
	}); err != nil {
		return fmt.Errorf("waiting for Flux to apply %s: %w", short(sha), err)
	}
	out.ok(fmt.Sprintf("kustomization/%s Ready after %s: applied %s", repoName, since(start), shortSHAs(revision(sha))))
	return nil
}

// fetch asks Flux to fetch the repository now rather than at its next
// interval, as `flux reconcile source git` does.
func (fluxTool) fetch(ctx context.Context, cl *cluster, out *printer) error {
	out.cmd("flux reconcile source git " + repoName + "    # or wait for its 1m interval, or a webhook")
	repo := fluxenv.GitRepository(fluxNamespace, repoName, "", 0)
	_, err := fluxenv.RequestReconcile(ctx, cl.client, repo)
	return err
}

func (fluxTool) watch() source {
	return source{list: &kustomizev1.KustomizationList{}, opts: named(fluxNamespace, repoName)}
}

// show prints each new revision Flux attempts, and each distinct outcome of
// an attempt (Ready True or False; the other Unknowns are Flux at work, and a
// Ready=True written before lastAppliedRevision is half a status).
func (fluxTool) show(t *timeline, obj client.Object) {
	ks, ok := obj.(*kustomizev1.Kustomization)
	if !ok {
		return
	}
	c := apimeta.FindStatusCondition(ks.Status.Conditions, meta.ReadyCondition)
	if c == nil {
		return
	}
	if c.Status == metav1.ConditionUnknown {
		if attempted := ks.Status.LastAttemptedRevision; attempted != t.toolTried && attempted != ks.Status.LastAppliedRevision {
			t.toolTried = attempted
			t.line(fmt.Sprintf("kustomization/%s  Ready=Unknown  %s  attempting %s", ks.Name, c.Reason, shortSHAs(attempted)))
		}
		return
	}
	if c.Status == metav1.ConditionTrue && ks.Status.LastAppliedRevision != ks.Status.LastAttemptedRevision {
		return
	}
	ok, _, _ = fluxenv.Ready(ks)
	if want := revision(t.sha); ks.Status.LastAttemptedRevision == want {
		switch {
		case !ok && strings.Contains(c.Message, immutable) && t.failed == 0:
			t.failed = since(t.began)
		case ok && ks.Status.LastAppliedRevision == want && t.applied == 0:
			t.applied = since(t.began)
		}
	}
	key := strings.Join([]string{string(c.Status), c.Reason, c.Message, ks.Status.LastAttemptedRevision, ks.Status.LastAppliedRevision}, "\n")
	if key == t.toolLast {
		return
	}
	t.toolLast = key
	status := t.out.paint(green, "Ready=True")
	if c.Status != metav1.ConditionTrue {
		status = t.out.paint(red, "Ready="+string(c.Status))
	}
	t.line(fmt.Sprintf("kustomization/%s  %s  %s  (applied %s, attempted %s)", ks.Name, status, c.Reason,
		shortSHAs(ks.Status.LastAppliedRevision), shortSHAs(ks.Status.LastAttemptedRevision)),
		wrapQuote(t.out, shortSHAs(elideValue(c.Message)))...)
}

// firstNote: claimwarden starts on the revision as soon as Flux attempts it,
// and its re-create can land before Flux's dry-run: Flux then never fails.
func (fluxTool) firstNote(t *timeline) string {
	return fmt.Sprintf("Flux never failed on %s this time: claimwarden starts as soon as Flux attempts a revision, "+
		"and its re-create reached the API server before Flux's apply (step 4 shows the failure)", short(t.sha))
}

func (fluxTool) verdict(t *timeline) string {
	if t.failed > 0 {
		return "failed, then applied"
	}
	return "applied (claimwarden was first)"
}

func (fluxTool) appliedNote(t *timeline) string {
	return fmt.Sprintf("Flux applied %s: kustomization/%s Ready again", short(t.sha), repoName)
}

// stillFailing: Flux retries every few seconds and fails each time, so the
// change stays refused until Git asks for a step the policies allow.
func (fluxTool) stillFailing(ctx context.Context, cl *cluster, sha, applied string, out *printer) error {
	if err := waitKustomization(ctx, cl, deniedTimeout, func(ks *kustomizev1.Kustomization) bool {
		c := apimeta.FindStatusCondition(ks.Status.Conditions, meta.ReadyCondition)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, immutable) &&
			ks.Status.LastAttemptedRevision == revision(sha) && ks.Status.LastAppliedRevision == revision(applied)
	}); err != nil {
		return fmt.Errorf("waiting for Flux to fail again on %s with %s still applied: %w", short(sha), short(applied), err)
	}
	out.ok(fmt.Sprintf("kustomization/%s still Ready=False: attempted %s, applied %s", repoName, short(sha), short(applied)))
	return nil
}

// waitKustomization polls the story's Kustomization until done says so.
func waitKustomization(ctx context.Context, cl *cluster, timeout time.Duration, done func(*kustomizev1.Kustomization) bool) error {
	return waitFlux(ctx, cl, timeout, &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: fluxNamespace, Name: repoName}}, done)
}

// waitFlux polls the Flux object obj (its namespace and name set) until done
// says so, failing early when a component has died, and at the deadline with
// its Ready condition.
func waitFlux[T fluxenv.Object](ctx context.Context, cl *cluster, timeout time.Duration, obj T, done func(T) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return fluxenv.Until(ctx, cl.client, obj, func() (bool, error) {
		if err := cl.alive(); err != nil {
			return false, err
		}
		return done(obj), nil
	})
}

// revision is how Flux names a commit of the branch it follows.
func revision(sha string) string { return fluxenv.Branch + "@sha1:" + sha }
