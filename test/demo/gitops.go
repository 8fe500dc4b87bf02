package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/fluxenv"
)

// The Git side of the flux story: one repository, applied by one
// GitRepository and Kustomization of the same name into the demo namespace.
const (
	repoName      = "demo"
	fluxNamespace = "flux-system"
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

const kustomizationYAML = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- statefulset.yaml
`

// push commits the StatefulSet at size to the repository and prints it as
// the user's `git commit` and `git push`, with the change from the size before
// (none for the first commit). It returns the commit SHA.
func push(ctx context.Context, cl *cluster, o options, from, size, message string, out *printer) (string, error) {
	sha, err := cl.gitea.PushCommit(ctx, repoName, map[string]string{
		"statefulset.yaml":   fmt.Sprintf(statefulSetYAML, o.replicas, storageClass, size),
		"kustomization.yaml": kustomizationYAML,
	}, message)
	if err != nil {
		return "", err
	}
	out.cmd(fmt.Sprintf("git commit -am %q && git push    # %s", message, short(sha)))
	if from != "" {
		out.note(out.paint(red, "-          storage: "+from))
		out.note(out.paint(green, "+          storage: "+size))
	}
	return sha, nil
}

// fetchNow asks Flux to fetch the repository now rather than at its next
// interval, as `flux reconcile source git` does.
func fetchNow(ctx context.Context, cl *cluster, out *printer) error {
	out.cmd("flux reconcile source git " + repoName + "    # or wait for its 1m interval, or a webhook")
	repo := fluxenv.GitRepository(fluxNamespace, repoName, "", 0)
	_, err := fluxenv.RequestReconcile(ctx, cl.client, repo)
	return err
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

// revision is how Flux names a commit of the branch it follows.
func revision(sha string) string { return fluxenv.Branch + "@sha1:" + sha }

// short is a SHA as git log --oneline prints it.
func short(sha string) string { return sha[:min(len(sha), 8)] }

var fullSHA = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

// shortSHAs shortens the full commit SHAs in a message for reading.
func shortSHAs(msg string) string {
	return fullSHA.ReplaceAllStringFunc(msg, short)
}
