package main

import (
	"context"
	"fmt"
	"time"

	giteasdk "code.gitea.io/sdk/gitea"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// mergedFlux is Flux in the autoresize story: the same as in the flux
// story, but the commit it applies is a merge and no later step shows
// Flux failing.
type mergedFlux struct{ fluxTool }

func (mergedFlux) firstNote(t *timeline) string {
	return fmt.Sprintf("Flux never failed on %s this time: claimwarden starts as soon as Flux attempts a revision, "+
		"and its re-create reached the API server before Flux's apply", short(t.sha))
}

// tellAutoresize tells the autoresize story on a cluster started with
// Gitea, Flux and Prometheus: the StatefulSet in Git fills up, claimwarden
// proposes growing it in a pull request, a person merges it, Flux applies
// it and claimwarden grows the claims, the Pods kept.
func tellAutoresize(ctx context.Context, cl *cluster, o options, out *printer) error {
	began := time.Now()
	tool := mergedFlux{}
	first, pods, vcr, err := gitopsDatabase(ctx, cl, o, tool, out)
	if err != nil {
		return err
	}
	filled := time.Now()
	if err := fillVolumes(ctx, cl, out); err != nil {
		return err
	}
	sdk, err := giteaClient(cl)
	if err != nil {
		return err
	}
	pr, err := awaitPullRequest(ctx, cl, sdk, filled, out)
	if err != nil {
		return err
	}
	merged, err := mergeAndFollow(ctx, cl, o, tool, sdk, pr, pods, vcr, out)
	if err != nil {
		return err
	}
	if err := afterMerge(ctx, cl, sdk, pr, out); err != nil {
		return err
	}
	summarise(tool, []outcome{first, merged}, since(began), out)
	return nil
}

// mergeAndFollow merges the pull request, makes Flux fetch the merge and
// follows what happens until claimwarden grew every claim, then checks the
// Pods were kept and the merge commit got success.
func mergeAndFollow(ctx context.Context, cl *cluster, o options, tool gitOpsTool, sdk *giteasdk.Client, pr *giteasdk.PullRequest, pods map[string]types.UID, vcr *v1alpha1.VolumeClaimRollout, out *printer) (outcome, error) {
	out.step(fmt.Sprintf("A person reviews pull request #%d and merges it", pr.Index))
	out.note("From here it is the flux story's commit: Flux applies the merge, claimwarden converges it.")
	var before appsv1.StatefulSet
	if err := cl.client.Get(ctx, stsKey, &before); err != nil {
		return outcome{}, err
	}
	t, sha, stop, err := followAfter(ctx, cl, tool, "the merge", before.UID, vcr, out, func() (string, error) {
		sha, err := merge(cl, sdk, pr, out)
		if err == nil {
			out.ok(fmt.Sprintf("pull request #%d merged: commit %s on main", pr.Index, short(sha)))
		}
		return sha, err
	})
	if err != nil {
		return outcome{}, err
	}
	defer stop()
	grown, _, err := converged(ctx, cl, o, tool, t, sha, before.UID, pods, out)
	grown.change = fmt.Sprintf("%s → %s, pull request #%d", sizeBefore, sizeAfter, pr.Index)
	return grown, err
}

// afterMerge shows that autoresize saw the merge and, at the grown size,
// proposes nothing more: still one pull request.
func afterMerge(ctx context.Context, cl *cluster, sdk *giteasdk.Client, pr *giteasdk.PullRequest, out *printer) error {
	out.step("After the merge: nothing more to grow")
	out.note("claimwarden reads usage again: the claims are twice the size, the data is not.")
	if err := showAutoresize(ctx, cl, "merged", pr.HTMLURL, usedPercent(sizeAfter), out); err != nil {
		return err
	}
	prs, _, err := sdk.ListRepoPullRequests(cl.gitea.User, repoName, giteasdk.ListPullRequestsOptions{State: giteasdk.StateAll})
	if err != nil {
		return err
	}
	if len(prs) != 1 {
		return fmt.Errorf("%d pull requests after the merge, want the one", len(prs))
	}
	out.ok(fmt.Sprintf("still one pull request: %s of %s is under autoresize_used_percent, and the cooldown would keep another a minute away", used, sizeAfter))
	return nil
}
