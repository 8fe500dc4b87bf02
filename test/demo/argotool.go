package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/argoenv"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// Argo CD's words for what the story waits for.
const (
	argoSynced    = "Synced"
	argoOutOfSync = "OutOfSync"
	argoSucceeded = "Succeeded"
)

// argoTool is the Argo CD side of the GitOps story: an Application named
// repoName, in Argo CD's namespace, with automated sync, applies the
// repository's root directory into the demo namespace.
//
// Its sync retries are off. By default an automated sync that failed is
// retried 5 times, 10 s to 160 s apart; once claimwarden converged the
// StatefulSet the next retry succeeds, and claimwarden's own sync, which
// waits for Argo CD's operation to end, is then not needed. Without
// retries, as after the last one, Argo CD never syncs that revision again by
// itself, and claimwarden's sync is what brings the Application to Synced.
// (claimwarden usually converges before Argo CD's sync applies, though, and
// that sync then succeeds.)
type argoTool struct{}

func (argoTool) name() string { return "Argo CD" }

// files are plain manifests: Argo CD applies a directory of them as they are.
func (argoTool) files(o options, size string) map[string]string { return statefulSetFile(o, size) }

func (argoTool) deploy(ctx context.Context, cl *cluster, url, sha string, out *printer) error {
	out.cmd(fmt.Sprintf("argocd app create %s --repo %s --path . --dest-server %s --dest-namespace %s --sync-policy automated",
		repoName, url, argoenv.InClusterServer, namespace))
	out.cmd(fmt.Sprintf(`kubectl patch application %s -n %s --type merge -p '{"spec":{"syncPolicy":{"retry":{"limit":0}}}}'    # no retries`,
		repoName, cl.argo.Namespace))
	out.note("Retries off: a failed automated sync then stays failed, as after Argo CD's default 5 retries (~5 min);")
	out.note("when Argo CD's sync fails on the immutable templates, the sync claimwarden starts once it converged recovers it.")
	start := time.Now()
	app := cl.argo.Application(argoenv.AppSpec{Name: repoName, RepoURL: url, DestNamespace: namespace, Automated: true})
	if err := unstructured.SetNestedField(app.Object, int64(0), "spec", "syncPolicy", "retry", "limit"); err != nil {
		return err
	}
	if err := cl.client.Create(ctx, app); err != nil {
		return err
	}
	st, err := waitApplication(ctx, cl, readyTimeout, func(st appState) bool { return st.syncedAt(sha) })
	if err != nil {
		return fmt.Errorf("waiting for Argo CD to sync %s: %w", short(sha), err)
	}
	out.ok(fmt.Sprintf("application/%s Synced after %s: %s applied %s", repoName, since(start), st.initiator, short(sha)))
	return nil
}

// fetch asks for a hard refresh: Argo CD's repo-server caches what a branch
// points at for minutes, so without one (or a webhook) a push is seen late.
func (argoTool) fetch(ctx context.Context, cl *cluster, out *printer) error {
	out.cmd("argocd app get " + repoName + " --hard-refresh    # or wait minutes for Argo CD to poll, or a webhook")
	return cl.argo.HardRefresh(ctx, cl.client, cl.argo.Namespace, repoName)
}

func (argoTool) watch() source {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(argoenv.ApplicationGVK.GroupVersion().WithKind(argoenv.ApplicationGVK.Kind + "List"))
	return source{list: list, opts: named(argoenv.DefaultNamespace, repoName)}
}

// show prints the Application when its sync status, health or operation
// changed, once Argo CD works on the commit pushed: a line with the first
// two, and the operation below it. Argo CD writes the Application often
// (reconciledAt, resource lists), which is not news.
func (argoTool) show(t *timeline, obj client.Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	st := appStateOf(u)
	if st.Revision != t.sha && st.opRevision != t.sha {
		return // the state before the push, or the hard refresh under way
	}
	if st.opRevision == t.sha {
		switch {
		case st.failedAttempt() && strings.Contains(st.OperationMessage, immutable):
			if t.failed == 0 {
				t.failed = since(t.began)
			}
		case st.failedAttempt():
			if t.otherFailure == "" {
				t.otherFailure = st.OperationMessage
			}
		case st.OperationPhase == argoSucceeded && t.appliedBy == "":
			// The first operation to apply sha; the Application shows
			// Synced once Argo CD compared again, maybe after another one.
			t.appliedBy = st.initiator
		}
		if st.syncedAt(t.sha) && t.applied == 0 {
			t.applied = since(t.began)
		}
	}
	key := strings.Join([]string{st.Sync, st.Revision, st.Health, st.OperationPhase, st.OperationMessage, st.opRevision}, "\n")
	if key == t.toolLast {
		return
	}
	t.toolLast = key
	sync := t.out.paint(green, st.Sync)
	if st.Sync != argoSynced {
		sync = t.out.paint(red, st.Sync)
	}
	var more []string
	if st.OperationPhase != "" {
		more = append(more, fmt.Sprintf("operation %s: %s of %s", st.OperationPhase, st.initiator, short(st.opRevision)))
		if st.OperationMessage != "" {
			more = append(more, wrapQuote(t.out, shortSHAs(elideValue(st.OperationMessage)))...)
		}
	}
	t.line(fmt.Sprintf("application/%s  %s  %s  (revision %s)", u.GetName(), sync, st.Health, short(st.Revision)), more...)
}

// firstNote: claimwarden proposes as soon as an automated Application is
// OutOfSync on a StatefulSet, and its re-create can land before Argo CD's
// sync applies: the sync then succeeds at once, or finds the StatefulSet
// gone for the moment between the orphan delete and the create.
func (argoTool) firstNote(t *timeline) string {
	if t.otherFailure != "" {
		return fmt.Sprintf("Argo CD's sync of %s failed, but not on the immutable templates this time: claimwarden starts as soon as "+
			"an automated Application is OutOfSync, and Argo CD's apply came between its delete and create of the StatefulSet "+
			"(step 4 shows the immutable failure)", short(t.sha))
	}
	return fmt.Sprintf("Argo CD never failed on %s this time: claimwarden starts as soon as an automated Application is OutOfSync, "+
		"and its re-create reached the API server before Argo CD's sync (step 4 shows the failure)", short(t.sha))
}

func (argoTool) appliedNote(t *timeline) string {
	return fmt.Sprintf("application/%s Synced at %s: applied by %s", repoName, short(t.sha), t.appliedBy)
}

func (argoTool) verdict(t *timeline) string {
	by := strings.Replace(t.appliedBy, "Argo CD's", "its", 1)
	switch {
	case t.failed > 0:
		return "failed, then applied by " + by
	case t.otherFailure != "":
		return "failed (StatefulSet briefly absent), then applied by " + by
	}
	return "applied by " + by + " (claimwarden was first)"
}

// stillFailing: the automated sync retries (five times, 5 s to 80 s apart)
// and fails each time; then it gives up until Git changes.
func (argoTool) stillFailing(ctx context.Context, cl *cluster, sha, applied string, out *printer) error {
	st, err := waitApplication(ctx, cl, deniedTimeout, func(st appState) bool {
		return st.Sync == argoOutOfSync && st.Revision == sha && st.opRevision == sha && st.OperationPhase != argoSucceeded &&
			strings.Contains(st.OperationMessage, immutable) && st.deployed == applied
	})
	if err != nil {
		return fmt.Errorf("waiting for Argo CD to fail on %s with %s still the last synced: %w", short(sha), short(applied), err)
	}
	out.ok(fmt.Sprintf("application/%s still OutOfSync at %s, its sync %s; last synced %s",
		repoName, short(sha), strings.ToLower(st.OperationPhase), short(applied)))
	return nil
}

// appState is what the story reads of an Application.
type appState struct {
	argoenv.AppStatus
	// opRevision is the commit of the last operation; initiator says who
	// started it; retries counts the automated sync's retries of it.
	opRevision, initiator string
	retries               int64
	// deployed is the commit of the last successful sync (status.history).
	deployed string
}

func appStateOf(u *unstructured.Unstructured) appState {
	st := appState{AppStatus: argoenv.Status(u)}
	op, _, _ := unstructured.NestedMap(u.Object, "status", "operationState")
	st.opRevision, _, _ = unstructured.NestedString(op, "syncResult", "revision")
	if st.opRevision == "" {
		st.opRevision, _, _ = unstructured.NestedString(op, "operation", "sync", "revision")
	}
	st.retries, _, _ = unstructured.NestedInt64(op, "retryCount")
	automated, _, _ := unstructured.NestedBool(op, "operation", "initiatedBy", "automated")
	user, _, _ := unstructured.NestedString(op, "operation", "initiatedBy", "username")
	switch {
	case automated && st.retries > 0:
		st.initiator = fmt.Sprintf("Argo CD's automated sync (retry #%d)", st.retries)
	case automated:
		st.initiator = "Argo CD's automated sync"
	case user == argoAccount:
		st.initiator = "claimwarden's sync"
	case user != "":
		st.initiator = "a sync by " + user
	default:
		st.initiator = "a sync"
	}
	history, _, _ := unstructured.NestedSlice(u.Object, "status", "history")
	if n := len(history); n > 0 {
		if last, ok := history[n-1].(map[string]any); ok {
			st.deployed, _, _ = unstructured.NestedString(last, "revision")
		}
	}
	return st
}

// failedAttempt reports whether the last attempt of the operation failed:
// it ended Failed or Error, or waits to be retried.
func (st appState) failedAttempt() bool {
	return st.OperationPhase == "Failed" || st.OperationPhase == "Error" || strings.Contains(st.OperationMessage, "Retrying attempt #")
}

// syncedAt reports whether the Application is Synced at sha by an operation
// that synced sha.
func (st appState) syncedAt(sha string) bool {
	return st.Sync == argoSynced && st.Revision == sha && st.OperationPhase == argoSucceeded && st.opRevision == sha
}

// waitApplication polls the story's Application until done says so, failing
// early when a component has died, and at the deadline with the last state.
func waitApplication(ctx context.Context, cl *cluster, timeout time.Duration, done func(appState) bool) (appState, error) {
	var st appState
	var last string
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		if err := cl.alive(); err != nil {
			return false, err
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(argoenv.ApplicationGVK)
		if err := cl.client.Get(ctx, client.ObjectKey{Namespace: cl.argo.Namespace, Name: repoName}, u); err != nil {
			last = err.Error()
			return false, client.IgnoreNotFound(err)
		}
		st = appStateOf(u)
		last = st.String()
		return done(st), nil
	})
	if err != nil {
		return st, fmt.Errorf("application %s/%s (last: %s): %w", cl.argo.Namespace, repoName, last, err)
	}
	return st, nil
}
