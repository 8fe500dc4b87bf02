package main

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/fixtures"
)

// gitOpsTool is what the GitOps stories (gitopsstory.go) do differently with
// Flux and with Argo CD: the files kept in Git, pointing the tool at the
// repository, making it see a push, and reading its verdicts.
type gitOpsTool interface {
	// name is the tool as the story calls it: "Flux", "Argo CD".
	name() string
	// files are the repository's files with the StatefulSet at size.
	files(o options, size string) map[string]string
	// deploy points the tool at the repository at url and waits until it
	// applied sha, printing the user's commands and the tool's verdict.
	deploy(ctx context.Context, cl *cluster, url, sha string, out *printer) error
	// fetch makes the tool see the last push now, printed as the user's command.
	fetch(ctx context.Context, cl *cluster, out *printer) error
	// watch is the timeline's source for the tool's object.
	watch() source
	// show prints a version of the tool's object on t when it is news, and
	// marks t's milestones failed and applied.
	show(t *timeline, obj client.Object)
	// firstNote says why the tool did not fail on t's commit with the API
	// server's refusal: claimwarden was first.
	firstNote(t *timeline) string
	// appliedNote says how the tool applied t's commit.
	appliedNote(t *timeline) string
	// verdict sums up, for the summary, what the tool did with t's commit.
	verdict(t *timeline) string
	// stillFailing waits until the tool still fails on sha with applied in
	// place, and says so.
	stillFailing(ctx context.Context, cl *cluster, sha, applied string, out *printer) error
}

// The Git side of the GitOps stories: one repository, applied into the demo
// namespace by an object of the same name.
const (
	repoName = "demo"
	// statusTimeout bounds the wait for a commit status: claimwarden posts it
	// off the reconcile path within a second, retrying with back-off.
	statusTimeout = 30 * time.Second
)

// statefulSetYAML is the manifest kept in Git: fixtures.StatefulSet, written
// as a user would. Parameters: replicas, storage class, size.
const statefulSetYAML = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: %d
  podManagementPolicy: Parallel
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: registry.example/db:1
        volumeMounts:
        - {name: data, mountPath: /data}
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: %s
      resources:
        requests:
          storage: %s
`

// statefulSetFile is the manifest at size, as a repository file.
func statefulSetFile(o options, size string) map[string]string {
	return map[string]string{"statefulset.yaml": fmt.Sprintf(statefulSetYAML, o.replicas, storageClass, size)}
}

// push commits the tool's files with the StatefulSet at size to the
// repository and prints it as the user's `git commit` and `git push`, with the
// change from the size before (none for the first commit). It returns the
// commit SHA.
func push(ctx context.Context, cl *cluster, o options, tool gitOpsTool, from, size, message string, out *printer) (string, error) {
	sha, err := cl.gitea.PushCommit(ctx, repoName, tool.files(o, size), message)
	if err != nil {
		return "", err
	}
	out.cmd(fmt.Sprintf("git commit -am %q && git push    # %s", message, short(sha)))
	if from != "" {
		showChange(changedLines(tool.files(o, from), tool.files(o, size)), out)
	}
	return sha, nil
}

// showChange prints changedLines' lines, the removed ones red and the added
// ones green, as `git diff` colours them.
func showChange(lines []string, out *printer) {
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "-"):
			l = out.paint(red, l)
		case strings.HasPrefix(l, "+"):
			l = out.paint(green, l)
		}
		out.note(l)
	}
}

// changedLines is what `git diff` would show of the change from before to
// after, without context: the name of each file that changed, then its
// removed lines (-) and added lines (+). The stories' commits edit values in
// place, so the lines are compared by position.
func changedLines(before, after map[string]string) []string {
	var lines []string
	names := maps.Clone(before)
	maps.Copy(names, after)
	for _, name := range slices.Sorted(maps.Keys(names)) {
		old, cur := splitLines(before[name]), splitLines(after[name])
		var removed, added []string
		for i := range max(len(old), len(cur)) {
			o, c := lineAt(old, i), lineAt(cur, i)
			if o == c {
				continue
			}
			if i < len(old) {
				removed = append(removed, "-"+o)
			}
			if i < len(cur) {
				added = append(added, "+"+c)
			}
		}
		if len(removed)+len(added) > 0 {
			lines = append(append(append(lines, name), removed...), added...)
		}
	}
	return lines
}

// splitLines splits a file into its lines; a file that is not there has none.
func splitLines(file string) []string {
	if file == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(file, "\n"), "\n")
}

// lineAt is lines[i], or "" past the end.
func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// commitStatus polls Gitea until claimwarden's status on sha is state, and
// prints it as read back from Gitea's API. It returns the description.
func commitStatus(ctx context.Context, cl *cluster, sha, state string, out *printer) (string, error) {
	statusContext := "claimwarden/" + namespace + "/" + stsName
	out.cmd(fmt.Sprintf("curl %s/api/v1/repos/%s/%s/commits/%s/status", cl.gitea.URL, cl.gitea.User, repoName, short(sha)))
	var last string
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, statusTimeout, true, func(ctx context.Context) (bool, error) {
		if err := cl.alive(); err != nil {
			return false, err
		}
		_, statuses, err := cl.gitea.CombinedStatus(ctx, repoName, sha)
		if err != nil {
			return false, err
		}
		for _, s := range statuses {
			if s.Context == statusContext {
				last = s.State + " " + s.Description
				if s.State == state {
					out.ok(fmt.Sprintf("commit %s on Gitea: %s  %s  %q", short(sha), paintState(out, s.State), s.Context, shortSHAs(s.Description)))
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("commit %s: no %s status %s within %s (last: %q): %w", short(sha), state, statusContext, statusTimeout, last, err)
	}
	return strings.TrimPrefix(last, state+" "), nil
}

func paintState(out *printer, state string) string {
	switch state {
	case "success":
		return out.paint(green, state)
	case "pending":
		return out.paint(yellow, state)
	}
	return out.paint(red, state)
}

// short is a SHA as git log --oneline prints it.
func short(sha string) string { return sha[:min(len(sha), 8)] }

var fullSHA = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

// shortSHAs shortens the full commit SHAs in a message for reading.
func shortSHAs(msg string) string {
	return fullSHA.ReplaceAllStringFunc(msg, short)
}
