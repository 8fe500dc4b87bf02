package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	giteasdk "code.gitea.io/sdk/gitea"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/autoresize"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// pullRequestTimeout bounds the wait for claimwarden's pull request: it
// checks every 2s once Prometheus has the usage, so a minute means stuck.
const pullRequestTimeout = 2 * time.Minute

// bodyLines is how much of the pull request's body the story prints.
const bodyLines = 24

// giteaClient is the Gitea API as the story's person uses it, with the
// admin's token: reading and merging the pull request.
func giteaClient(cl *cluster) (*giteasdk.Client, error) {
	// No proxy: Gitea is on loopback. No version probe: it is known.
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 30 * time.Second}
	return giteasdk.NewClient(cl.gitea.URL, giteasdk.SetToken(cl.gitea.Token), giteasdk.SetHTTPClient(hc), giteasdk.SetGiteaVersion(""))
}

// awaitPullRequest waits until claimwarden opened its pull request, then
// prints it (title, branch, diff, body), the event on the StatefulSet and
// the rollout's status.autoresize that point at it.
func awaitPullRequest(ctx context.Context, cl *cluster, sdk *giteasdk.Client, filled time.Time, out *printer) (*giteasdk.PullRequest, error) {
	branch := "claimwarden/autoresize/" + namespace + "/" + stsName
	out.step("claimwarden opens a pull request")
	out.note(fmt.Sprintf("Every 2s it reads usage from Prometheus and asks the autoresize policy; the change goes to Git, on branch %s.", branch))
	var pr *giteasdk.PullRequest
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, pullRequestTimeout, true, func(ctx context.Context) (bool, error) {
		if err := cl.alive(); err != nil {
			return false, err
		}
		prs, _, err := sdk.ListRepoPullRequests(cl.gitea.User, repoName, giteasdk.ListPullRequestsOptions{State: giteasdk.StateAll})
		if err != nil {
			return false, err
		}
		switch {
		case len(prs) > 1:
			return false, fmt.Errorf("%d pull requests, want one", len(prs))
		case len(prs) == 0:
			return false, nil
		}
		pr = prs[0]
		if pr.Head == nil || pr.Head.Ref != branch || pr.Base == nil || pr.Base.Ref != "main" || pr.State != giteasdk.StateOpen {
			return false, fmt.Errorf("pull request #%d (%s) from %+v to %+v, want an open one from %s to main", pr.Index, pr.State, pr.Head, pr.Base, branch)
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for claimwarden's pull request (see vcr/%s status.autoresize, %s): %w", stsName, cl.ctrl.LogPath(), err)
	}
	out.ok(fmt.Sprintf("+%-6s pull request #%d: %q", since(filled), pr.Index, pr.Title))
	out.note(fmt.Sprintf("%s → main, %s", pr.Head.Ref, pr.HTMLURL))
	out.cmd(fmt.Sprintf("curl %s.diff", pr.HTMLURL))
	diff, _, err := sdk.GetPullRequestDiff(cl.gitea.User, repoName, pr.Index, giteasdk.PullRequestDiffOptions{})
	if err != nil {
		return nil, err
	}
	change := diffChanges(string(diff))
	showChange(change, out)
	if !sizeLineOnly(change) {
		return nil, fmt.Errorf("pull request #%d changes %q, want the one size line %s → %s", pr.Index, change, sizeBefore, sizeAfter)
	}
	out.note("Its description, for the reviewer:")
	out.quote(head(pr.Body, bodyLines))
	if err := proposedEvent(ctx, cl, filled, out); err != nil {
		return nil, err
	}
	return pr, showAutoresize(ctx, cl, "open", pr.HTMLURL, usedPercent(sizeBefore), out)
}

// proposedEvent waits for claimwarden's event saying it proposed, and prints it.
func proposedEvent(ctx context.Context, cl *cluster, since time.Time, out *printer) error {
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, eventsTimeout, true, func(ctx context.Context) (bool, error) {
		evs, err := claimwardenEvents(ctx, cl.client, since)
		if err != nil {
			return false, err
		}
		for _, ev := range evs {
			if ev.Reason == autoresize.ReasonProposed {
				out.ok(fmt.Sprintf("event %s %s on %s/%s: %s", ev.Type, ev.Reason, strings.ToLower(ev.Regarding.Kind), ev.Regarding.Name, ev.Note))
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the %s event: %w", autoresize.ReasonProposed, err)
	}
	return nil
}

// showAutoresize waits until the rollout's status.autoresize says the pull
// request at url is in state and the fullest claim is usage full ("88%"),
// and prints it.
func showAutoresize(ctx context.Context, cl *cluster, state, url, usage string, out *printer) error {
	var a *v1alpha1.AutoresizeStatus
	_, err := waitRollout(ctx, cl, time.Minute, func(v *v1alpha1.VolumeClaimRollout) bool {
		a = v.Status.Autoresize
		return a != nil && a.State == state && a.PullRequest == url &&
			strings.HasPrefix(a.Usage, usage+" ")
	})
	if err != nil {
		return fmt.Errorf("waiting for vcr/%s status.autoresize to say %s %s, %s used (last %+v): %w", stsName, state, url, usage, a, err)
	}
	out.cmd(fmt.Sprintf("kubectl get vcr %s -n %s -o jsonpath='{.status.autoresize}'", stsName, namespace))
	out.table([][]string{
		{"Usage", "Pull request", "State", "Proposed"},
		{a.Usage, a.PullRequest, a.State, a.Proposed},
	})
	if a.Message != "" {
		out.quote("message: " + a.Message)
	}
	return nil
}

// merge merges the pull request as its reviewer would, and returns the
// merge commit.
func merge(cl *cluster, sdk *giteasdk.Client, pr *giteasdk.PullRequest, out *printer) (string, error) {
	out.cmd(fmt.Sprintf("curl -X POST %s/api/v1/repos/%s/%s/pulls/%d/merge -d '{\"Do\": \"merge\"}'    # or the Merge button",
		cl.gitea.URL, cl.gitea.User, repoName, pr.Index))
	merged, _, err := sdk.MergePullRequest(cl.gitea.User, repoName, pr.Index, giteasdk.MergePullRequestOption{Style: giteasdk.MergeStyleMerge})
	if err != nil {
		return "", fmt.Errorf("merging pull request #%d: %w", pr.Index, err)
	}
	if !merged {
		return "", fmt.Errorf("pull request #%d: not merged, and Gitea said no more", pr.Index)
	}
	got, _, err := sdk.GetPullRequest(cl.gitea.User, repoName, pr.Index)
	if err != nil {
		return "", err
	}
	if got.MergedCommitID == nil {
		return "", errors.New("the merged pull request names no merge commit")
	}
	return *got.MergedCommitID, nil
}

// diffChanges is what changedLines is for a unified diff: the name of each
// file changed, then its removed lines (-) and added lines (+), without
// context.
func diffChanges(diff string) []string {
	var lines []string
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			if i := strings.LastIndex(l, " b/"); i >= 0 {
				lines = append(lines, l[i+len(" b/"):])
			}
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"), strings.HasPrefix(l, "+"):
			lines = append(lines, l)
		}
	}
	return lines
}

// sizeLineOnly reports whether diffChanges' lines change one file's size
// line from sizeBefore to sizeAfter and nothing else.
func sizeLineOnly(change []string) bool {
	return len(change) == 3 && strings.HasPrefix(change[1], "-") && strings.HasPrefix(change[2], "+") &&
		strings.TrimSpace(change[1][1:]) == "storage: "+sizeBefore && strings.TrimSpace(change[2][1:]) == "storage: "+sizeAfter
}

// head is the first n lines of s, with a line saying how many were left out.
func head(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n[... %d more lines]", len(lines)-n)
}
