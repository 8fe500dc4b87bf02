package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

// sizeDenied is what the last commit asks for: +300% over sizeAfter, more
// than the +100% the shipped max-step policy allows.
const sizeDenied = "8Gi"

// deniedTimeout bounds step 4: Flux fails and claimwarden denies within
// seconds, with nothing to resize.
const deniedTimeout = time.Minute

// outcome is what became of one commit, for the summary.
type outcome struct {
	sha, change, flux, claimwarden, status string
}

// tellFlux runs the flux story on a cluster started with Gitea and Flux.
func tellFlux(ctx context.Context, cl *cluster, o options, out *printer) error {
	began := time.Now()
	first, pods, vcr, err := fluxDatabase(ctx, cl, o, out)
	if err != nil {
		return err
	}
	grown, vcr, err := fluxAllowed(ctx, cl, o, pods, vcr, out)
	if err != nil {
		return err
	}
	denied, err := fluxDenied(ctx, cl, o, grown.sha, pods, vcr, out)
	if err != nil {
		return err
	}
	summarise([]outcome{first, grown, denied}, since(began), out)
	return nil
}

// fluxDatabase commits the StatefulSet at sizeBefore, points Flux at the
// repository and waits until Flux applied it, its Pods are Ready and
// claimwarden reports its claims compatible. It returns the Pod UIDs and the
// rollout as it is then.
func fluxDatabase(ctx context.Context, cl *cluster, o options, out *printer) (outcome, map[string]types.UID, *v1alpha1.VolumeClaimRollout, error) {
	c := cl.client
	out.step(fmt.Sprintf("A database in Git: Flux applies StatefulSet %s with %s volumes", stsName, sizeBefore))
	if err := fixtures.Namespace(ctx, c, namespace); err != nil {
		return outcome{}, nil, nil, err
	}
	if err := c.Create(ctx, storagesim.StorageClass(storageClass, true)); err != nil {
		return outcome{}, nil, nil, err
	}
	out.ok(fmt.Sprintf("namespace %s and StorageClass %s (allowVolumeExpansion: true), as the cluster admin made them", namespace, storageClass))
	url, err := cl.gitea.CreateRepo(ctx, repoName)
	if err != nil {
		return outcome{}, nil, nil, err
	}
	out.ok("Gitea repository " + url)
	msg := fmt.Sprintf("db: %d replicas with %s volumes", o.replicas, sizeBefore)
	sha, err := push(ctx, cl, o, "", sizeBefore, msg, out)
	if err != nil {
		return outcome{}, nil, nil, err
	}

	out.cmd(fmt.Sprintf("flux create source git %s --url=%s --branch=%s --interval=1m", repoName, url, fluxenv.Branch))
	out.cmd(fmt.Sprintf("flux create kustomization %s --source=GitRepository/%s --path=./ --prune=true --target-namespace=%s", repoName, repoName, namespace))
	start := time.Now()
	if err := c.Create(ctx, fluxenv.GitRepository(fluxNamespace, repoName, url, time.Minute)); err != nil {
		return outcome{}, nil, nil, err
	}
	ks := fluxenv.Kustomization(fluxNamespace, repoName, repoName, "./")
	ks.Spec.TargetNamespace = namespace
	if err := c.Create(ctx, ks); err != nil {
		return outcome{}, nil, nil, err
	}
	if err := waitKustomization(ctx, cl, readyTimeout, func(ks *kustomizev1.Kustomization) bool {
		ok, _, _ := fluxenv.Ready(ks)
		return ok && ks.Status.LastAppliedRevision == revision(sha)
	}); err != nil {
		return outcome{}, nil, nil, fmt.Errorf("waiting for Flux to apply %s: %w", short(sha), err)
	}
	out.ok(fmt.Sprintf("kustomization/%s Ready after %s: applied %s", repoName, since(start), shortSHAs(revision(sha))))
	if err := fixtures.WaitReady(ctx, c, stsKey, readyTimeout); err != nil {
		return outcome{}, nil, nil, err
	}
	out.ok(fmt.Sprintf("StatefulSet %s: %d/%d Pods Ready after %s", stsName, o.replicas, o.replicas, since(start)))
	vcr, err := waitRollout(ctx, cl, readyTimeout, func(v *v1alpha1.VolumeClaimRollout) bool {
		return apimeta.IsStatusConditionTrue(v.Status.Conditions, meta.ReadyCondition) && claimsAt(v, sizeBefore, o.replicas)
	})
	if err != nil {
		return outcome{}, nil, nil, fmt.Errorf("claimwarden did not report the StatefulSet's claims compatible: %w", err)
	}
	out.ok(fmt.Sprintf("claimwarden manages it already: VolumeClaimRollout %s is Ready, %s claims compatible", vcr.Name, vcr.Status.Progress))
	if err := showClaims(ctx, c, out); err != nil {
		return outcome{}, nil, nil, err
	}
	pods, err := podUIDs(ctx, c)
	if err != nil {
		return outcome{}, nil, nil, err
	}
	showPods(pods, nil, out)
	return outcome{sha: sha, change: "db at " + sizeBefore, flux: "applied", claimwarden: vcr.Status.Progress + " claims compatible", status: "-"}, pods, vcr, nil
}

// fluxAllowed commits sizeAfter and follows what happens until Flux applied
// it and every claim is grown, then checks the StatefulSet was re-created
// with its Pods kept and reads the commit status back from Gitea.
func fluxAllowed(ctx context.Context, cl *cluster, o options, pods map[string]types.UID, vcr *v1alpha1.VolumeClaimRollout, out *printer) (outcome, *v1alpha1.VolumeClaimRollout, error) {
	out.step(fmt.Sprintf("A commit grows the volumes: %s → %s", sizeBefore, sizeAfter))
	var before appsv1.StatefulSet
	if err := cl.client.Get(ctx, stsKey, &before); err != nil {
		return outcome{}, nil, err
	}
	t, sha, stop, err := pushAndFollow(ctx, cl, o, sizeBefore, sizeAfter, "db: grow the volumes to "+sizeAfter, before.UID, vcr, out)
	if err != nil {
		return outcome{}, nil, err
	}
	defer stop()
	err = t.until(ctx, cl, rolloutTimeout(o), func() (bool, error) {
		if s := stalled(t.vcr); s != nil && proposedBy(t.vcr, sha) {
			return false, fmt.Errorf("VolumeClaimRollout %s stalled (%s): %s", stsKey, s.Reason, s.Message)
		}
		return t.applied > 0 && t.recreated > 0 && t.rolloutAt(sizeAfter, o.replicas) && t.patched >= o.replicas, nil
	}, "the StatefulSet re-created", "Flux applying "+short(sha), "every claim at "+sizeAfter,
		fmt.Sprintf("a %s event per claim (%d)", patchedReason, o.replicas))
	if err != nil {
		return outcome{}, nil, err
	}
	grown := since(t.began)
	fluxDid := "failed, then applied"
	if t.failed > 0 {
		out.ok(fmt.Sprintf("+%-6s Flux could not apply %s: %s", t.failed, short(sha), immutable))
	} else {
		// claimwarden starts on the revision as soon as Flux attempts it, and
		// its re-create can land before Flux's dry-run: Flux then never fails.
		out.warn(fmt.Sprintf("Flux never failed on %s this time: claimwarden starts as soon as Flux attempts a revision, "+
			"and its re-create reached the API server before Flux's apply (step 4 shows the failure)", short(sha)))
		fluxDid = "applied (claimwarden was first)"
	}
	out.ok(fmt.Sprintf("+%-6s claimwarden re-created StatefulSet %s with the new template: uid %s → %s", t.recreated, stsName, before.UID, t.sts))
	out.ok(fmt.Sprintf("+%-6s Flux applied %s: kustomization/%s Ready again", t.applied, short(sha), repoName))
	out.ok(fmt.Sprintf("+%-6s every claim grown to %s, one at a time, highest ordinal first (%d %s events): vcr/%s Ready",
		grown, sizeAfter, t.patched, patchedReason, stsName))
	if !proposedBy(t.vcr, sha) {
		return outcome{}, nil, fmt.Errorf("VolumeClaimRollout %s: status.proposal %+v does not name commit %s", stsKey, t.vcr.Status.Proposal, sha)
	}
	src := t.vcr.Status.Proposal.Source
	out.note(fmt.Sprintf("vcr/%s status.proposal.source: %s %s/%s at %s", stsName, src.Kind, src.Namespace, src.Name, shortSHAs(src.Revision)))
	if err := showClaims(ctx, cl.client, out); err != nil {
		return outcome{}, nil, err
	}
	if err := claimsCapacity(ctx, cl.client, sizeAfter); err != nil {
		return outcome{}, nil, err
	}
	if err := podsKept(ctx, cl, pods, out); err != nil {
		return outcome{}, nil, err
	}
	desc, err := commitStatus(ctx, cl, sha, "success", out)
	if err != nil {
		return outcome{}, nil, err
	}
	return outcome{
		sha:         sha,
		change:      sizeBefore + " → " + sizeAfter,
		flux:        fluxDid,
		claimwarden: fmt.Sprintf("re-created %s, claims grown in %s", stsName, grown),
		status:      "success: " + desc,
	}, t.vcr, nil
}

// fluxDenied commits sizeDenied and checks that claimwarden denies it and
// changes nothing: Flux keeps failing, the commit gets failure.
func fluxDenied(ctx context.Context, cl *cluster, o options, applied string, pods map[string]types.UID, vcr *v1alpha1.VolumeClaimRollout, out *printer) (outcome, error) {
	out.step(fmt.Sprintf("A commit grows them too far: %s → %s (+300%%)", sizeAfter, sizeDenied))
	out.note("The shipped max-step policy allows at most +100% per change.")
	var before appsv1.StatefulSet
	if err := cl.client.Get(ctx, stsKey, &before); err != nil {
		return outcome{}, err
	}
	t, sha, stop, err := pushAndFollow(ctx, cl, o, sizeAfter, sizeDenied, "db: grow the volumes to "+sizeDenied, before.UID, vcr, out)
	if err != nil {
		return outcome{}, err
	}
	defer stop()
	err = t.until(ctx, cl, deniedTimeout, func() (bool, error) {
		s := stalled(t.vcr)
		return t.failed > 0 && s != nil && s.Reason == v1alpha1.ReasonPolicyDenied && proposedBy(t.vcr, sha), nil
	}, "Flux failing on "+immutable, "vcr/"+stsName+" Stalled "+v1alpha1.ReasonPolicyDenied)
	if err != nil {
		return outcome{}, err
	}
	s := stalled(t.vcr)
	if !strings.Contains(s.Message, "max-step") {
		return outcome{}, fmt.Errorf("VolumeClaimRollout %s: Stalled message %q does not name max-step", stsKey, s.Message)
	}
	out.ok(fmt.Sprintf("+%-6s Flux could not apply %s: %s", t.failed, short(sha), immutable))
	out.ok(fmt.Sprintf("+%-6s vcr/%s Stalled %s: nothing patched, nothing re-created", since(t.began), stsName, s.Reason))
	desc, err := commitStatus(ctx, cl, sha, "failure", out)
	if err != nil {
		return outcome{}, err
	}
	if !strings.Contains(desc, "max-step") {
		return outcome{}, fmt.Errorf("commit %s: failure %q does not name max-step", short(sha), desc)
	}

	// Flux retries every few seconds and fails each time: the change stays
	// refused until Git asks for a step the policies allow.
	if err := waitKustomization(ctx, cl, deniedTimeout, func(ks *kustomizev1.Kustomization) bool {
		c := apimeta.FindStatusCondition(ks.Status.Conditions, meta.ReadyCondition)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, immutable) &&
			ks.Status.LastAttemptedRevision == revision(sha) && ks.Status.LastAppliedRevision == revision(applied)
	}); err != nil {
		return outcome{}, fmt.Errorf("waiting for Flux to fail again on %s with %s still applied: %w", short(sha), short(applied), err)
	}
	out.ok(fmt.Sprintf("kustomization/%s still Ready=False: attempted %s, applied %s", repoName, short(sha), short(applied)))
	var after appsv1.StatefulSet
	if err := cl.client.Get(ctx, stsKey, &after); err != nil {
		return outcome{}, err
	}
	if after.UID != before.UID || templateSize(&after) != sizeAfter {
		return outcome{}, fmt.Errorf("StatefulSet %s: uid %s and template %s after the denial, want %s and %s untouched",
			stsKey, after.UID, templateSize(&after), before.UID, sizeAfter)
	}
	out.ok(fmt.Sprintf("StatefulSet %s untouched: same uid %s, template still %s", stsName, after.UID, sizeAfter))
	if err := showClaims(ctx, cl.client, out); err != nil {
		return outcome{}, err
	}
	if err := claimsAtSize(ctx, cl.client, sizeAfter); err != nil {
		return outcome{}, err
	}
	if err := podsKept(ctx, cl, pods, out); err != nil {
		return outcome{}, err
	}
	return outcome{
		sha:         sha,
		change:      sizeAfter + " → " + sizeDenied,
		flux:        "failing",
		claimwarden: "denied by max-step, nothing changed",
		status:      "failure",
	}, nil
}

// podsKept shows the Pods against those of step 2 and fails unless they are
// the same.
func podsKept(ctx context.Context, cl *cluster, pods map[string]types.UID, out *printer) error {
	now, err := podUIDs(ctx, cl.client)
	if err != nil {
		return err
	}
	showPods(now, pods, out)
	return sameUIDs(pods, now)
}

// summarise prints what became of each commit.
func summarise(commits []outcome, took time.Duration, out *printer) {
	out.step("Summary")
	rows := [][]string{{"Commit", "Change", "Flux", "claimwarden", "Commit status"}}
	for _, c := range commits {
		rows = append(rows, []string{short(c.sha), c.change, c.flux, c.claimwarden, c.status})
	}
	out.table(rows)
	out.ok(fmt.Sprintf("the whole story took %s; not one Pod was restarted", took))
}
