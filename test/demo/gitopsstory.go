package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

// sizeDenied is what the last commit asks for: +300% over sizeAfter, more
// than the +100% the shipped max-step policy allows.
const sizeDenied = "8Gi"

// deniedTimeout bounds step 4: the GitOps tool fails and claimwarden denies
// within seconds, with nothing to resize.
const deniedTimeout = time.Minute

// outcome is what became of one commit, for the summary.
type outcome struct {
	sha, change, gitops, claimwarden, status string
}

// tellGitOps tells the GitOps story with tool on a cluster started with
// Gitea and that tool.
func tellGitOps(ctx context.Context, cl *cluster, o options, tool gitOpsTool, out *printer) error {
	began := time.Now()
	first, pods, vcr, err := gitopsDatabase(ctx, cl, o, tool, out)
	if err != nil {
		return err
	}
	grown, vcr, err := gitopsAllowed(ctx, cl, o, tool, pods, vcr, out)
	if err != nil {
		return err
	}
	denied, err := gitopsDenied(ctx, cl, o, tool, grown.sha, pods, vcr, out)
	if err != nil {
		return err
	}
	summarise(tool, []outcome{first, grown, denied}, since(began), out)
	return nil
}

// gitopsDatabase commits the StatefulSet at sizeBefore, points the tool at
// the repository and waits until it applied it, its Pods are Ready and
// claimwarden reports its claims compatible. It returns the Pod UIDs and the
// rollout as it is then.
func gitopsDatabase(ctx context.Context, cl *cluster, o options, tool gitOpsTool, out *printer) (outcome, map[string]types.UID, *v1alpha1.VolumeClaimRollout, error) {
	c := cl.client
	out.step(fmt.Sprintf("A database in Git: %s applies StatefulSet %s with %s volumes", tool.name(), stsName, sizeBefore))
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
	sha, err := push(ctx, cl, o, tool, "", sizeBefore, msg, out)
	if err != nil {
		return outcome{}, nil, nil, err
	}
	start := time.Now()
	if err := tool.deploy(ctx, cl, url, sha, out); err != nil {
		return outcome{}, nil, nil, err
	}
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
	return outcome{sha: sha, change: "db at " + sizeBefore, gitops: "applied", claimwarden: vcr.Status.Progress + " claims compatible", status: "-"}, pods, vcr, nil
}

// gitopsAllowed commits sizeAfter and follows what happens until the tool
// applied it and every claim is grown, then checks the StatefulSet was
// re-created with its Pods kept and reads the commit status back from Gitea.
func gitopsAllowed(ctx context.Context, cl *cluster, o options, tool gitOpsTool, pods map[string]types.UID, vcr *v1alpha1.VolumeClaimRollout, out *printer) (outcome, *v1alpha1.VolumeClaimRollout, error) {
	out.step(fmt.Sprintf("A commit grows the volumes: %s → %s", sizeBefore, sizeAfter))
	var before appsv1.StatefulSet
	if err := cl.client.Get(ctx, stsKey, &before); err != nil {
		return outcome{}, nil, err
	}
	t, sha, stop, err := pushAndFollow(ctx, cl, o, tool, sizeBefore, sizeAfter, "db: grow the volumes to "+sizeAfter, before.UID, vcr, out)
	if err != nil {
		return outcome{}, nil, err
	}
	defer stop()
	grown, vcr, err := converged(ctx, cl, o, tool, t, sha, before.UID, pods, out)
	grown.change = sizeBefore + " → " + sizeAfter
	return grown, vcr, err
}

// converged follows t until the tool applied its commit sha and claimwarden
// re-created the StatefulSet (uid before) and grew every claim to sizeAfter,
// then checks the Pods were kept and reads the commit status back from
// Gitea. The outcome's change is the caller's to say.
func converged(ctx context.Context, cl *cluster, o options, tool gitOpsTool, t *followed, sha string, before types.UID, pods map[string]types.UID, out *printer) (outcome, *v1alpha1.VolumeClaimRollout, error) {
	err := t.until(ctx, cl, rolloutTimeout(o), func() (bool, error) {
		if s := stalled(t.vcr); s != nil && proposedBy(t.vcr, sha) {
			return false, fmt.Errorf("VolumeClaimRollout %s stalled (%s): %s", stsKey, s.Reason, s.Message)
		}
		return t.applied > 0 && t.recreated > 0 && t.rolloutAt(sizeAfter, o.replicas) && t.patched >= o.replicas, nil
	}, "the StatefulSet re-created", tool.name()+" applying "+short(sha), "every claim at "+sizeAfter,
		fmt.Sprintf("a %s event per claim (%d)", patchedReason, o.replicas))
	if err != nil {
		return outcome{}, nil, err
	}
	grown := since(t.began)
	if t.failed > 0 {
		out.ok(fmt.Sprintf("+%-6s %s could not apply %s: %s", t.failed, tool.name(), short(sha), immutable))
	} else {
		out.warn(tool.firstNote(t.timeline))
	}
	out.ok(fmt.Sprintf("+%-6s claimwarden re-created StatefulSet %s with the new template: uid %s → %s", t.recreated, stsName, before, t.sts))
	out.ok(fmt.Sprintf("+%-6s %s", t.applied, tool.appliedNote(t.timeline)))
	out.ok(fmt.Sprintf("+%-6s every claim grown to %s, one at a time, highest ordinal first (%d %s events): vcr/%s Ready",
		grown, sizeAfter, t.patched, patchedReason, stsName))
	if !proposedBy(t.vcr, sha) {
		return outcome{}, nil, fmt.Errorf("VolumeClaimRollout %s: status.proposal %+v does not name commit %s", stsKey, t.vcr.Status.Proposal, sha)
	}
	src := t.vcr.Status.Proposal.Source
	chart := ""
	if src.Chart != "" {
		chart = ", chart " + shortSHAs(src.Chart)
	}
	out.note(fmt.Sprintf("vcr/%s status.proposal.source: %s %s/%s%s at %s", stsName, src.Kind, src.Namespace, src.Name, chart, shortSHAs(src.Revision)))
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
		gitops:      tool.verdict(t.timeline),
		claimwarden: fmt.Sprintf("re-created %s, claims grown in %s", stsName, grown),
		status:      "success: " + desc,
	}, t.vcr, nil
}

// gitopsDenied commits sizeDenied and checks that claimwarden denies it and
// changes nothing: the tool keeps failing, the commit gets failure.
func gitopsDenied(ctx context.Context, cl *cluster, o options, tool gitOpsTool, applied string, pods map[string]types.UID, vcr *v1alpha1.VolumeClaimRollout, out *printer) (outcome, error) {
	out.step(fmt.Sprintf("A commit grows them too far: %s → %s (+300%%)", sizeAfter, sizeDenied))
	out.note("The shipped max-step policy allows at most +100% per change.")
	var before appsv1.StatefulSet
	if err := cl.client.Get(ctx, stsKey, &before); err != nil {
		return outcome{}, err
	}
	t, sha, stop, err := pushAndFollow(ctx, cl, o, tool, sizeAfter, sizeDenied, "db: grow the volumes to "+sizeDenied, before.UID, vcr, out)
	if err != nil {
		return outcome{}, err
	}
	defer stop()
	err = t.until(ctx, cl, deniedTimeout, func() (bool, error) {
		s := stalled(t.vcr)
		return t.failed > 0 && s != nil && s.Reason == v1alpha1.ReasonPolicyDenied && proposedBy(t.vcr, sha), nil
	}, tool.name()+" failing on "+immutable, "vcr/"+stsName+" Stalled "+v1alpha1.ReasonPolicyDenied)
	if err != nil {
		return outcome{}, err
	}
	s := stalled(t.vcr)
	if !strings.Contains(s.Message, "max-step") {
		return outcome{}, fmt.Errorf("VolumeClaimRollout %s: Stalled message %q does not name max-step", stsKey, s.Message)
	}
	out.ok(fmt.Sprintf("+%-6s %s could not apply %s: %s", t.failed, tool.name(), short(sha), immutable))
	out.ok(fmt.Sprintf("+%-6s vcr/%s Stalled %s: nothing patched, nothing re-created", since(t.began), stsName, s.Reason))
	desc, err := commitStatus(ctx, cl, sha, "failure", out)
	if err != nil {
		return outcome{}, err
	}
	if !strings.Contains(desc, "max-step") {
		return outcome{}, fmt.Errorf("commit %s: failure %q does not name max-step", short(sha), desc)
	}
	if err := tool.stillFailing(ctx, cl, sha, applied, out); err != nil {
		return outcome{}, err
	}
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
		gitops:      "failing",
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
func summarise(tool gitOpsTool, commits []outcome, took time.Duration, out *printer) {
	out.step("Summary")
	rows := [][]string{{"Commit", "Change", tool.name(), "claimwarden", "Commit status"}}
	for _, c := range commits {
		rows = append(rows, []string{short(c.sha), c.change, c.gitops, c.claimwarden, c.status})
	}
	out.table(rows)
	out.ok(fmt.Sprintf("the whole story took %s; not one Pod was restarted", took))
}
