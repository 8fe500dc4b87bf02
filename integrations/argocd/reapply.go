package argocd

import (
	"context"
	"fmt"
	"strings"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Phases of a finished operation after which a sync is started again.
const (
	phaseFailed = "Failed"
	phaseError  = "Error"
)

// reapply runs once claimwarden converged a StatefulSet of app to the
// proposal made at revisions. Argo CD does not retry an automated sync that
// failed for a revision, and a refresh does not change that: a sync is
// started. A manual-sync Application is synced only when configured,
// otherwise refreshed so that it shows the converged StatefulSet.
func (r *Applications) reapply(ctx context.Context, key types.NamespacedName, revisions []string) error {
	u, app, err := r.read(ctx, key)
	if err != nil {
		return err
	}
	if !app.automated() && !r.syncManualApps {
		if err := r.api.Refresh(ctx, key); err != nil {
			return fmt.Errorf("refreshing Application %s: %w", key, err)
		}
		r.recorder.Eventf(u, nil, syncSource(u, revisions), corev1.EventTypeNormal, ReasonRefreshed, "Refresh",
			"claimwarden converged the volumeClaimTemplates of revision %s; sync the Application to apply the rest", strings.Join(revisions, ","))
		return nil
	}
	return r.startSync(ctx, u, app, revisions)
}

// syncPending starts the sync that reapply left waiting for the operation
// then running, once that operation has ended.
func (r *Applications) syncPending(ctx context.Context, u *unstructured.Unstructured, app *application) error {
	key := types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}
	revisions, ok := r.syncsWaiting.Get(key)
	if !ok || app.syncing() {
		return nil // nothing waits, or the operation's end brings the Application back here
	}
	op := app.Status.OperationState
	failedHere := op != nil && (op.Phase == phaseFailed || op.Phase == phaseError) &&
		op.SyncResult != nil && app.sameRevision(op.SyncResult)
	if app.Status.Sync.Status == syncStatusSynced || app.revisionKey() != strings.Join(revisions, ",") || (op != nil && !failedHere) {
		// Synced, or Git moved on (Argo CD attempts the new revision
		// itself), or the operation succeeded or was for another revision.
		r.syncsWaiting.Remove(key)
		return nil
	}
	// Read again: the cache may hold the Application from before the operation ended.
	fresh, app, err := r.read(ctx, key)
	if err != nil {
		return err
	}
	if app.syncing() {
		return nil
	}
	return r.startSync(ctx, fresh, app, revisions)
}

// startSync starts a sync of app as its automated sync would: the target
// revision, pruning as configured. A manual-sync Application is pinned to
// the revisions claimwarden evaluated. When another operation still runs,
// the sync waits for it (pending).
func (r *Applications) startSync(ctx context.Context, u *unstructured.Unstructured, app *application, revisions []string) error {
	key := types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}
	req := syncRequestFor(app, revisions)
	err := r.api.Sync(ctx, key, req)
	if IsOperationInProgress(err) {
		// Its end updates the Application, and syncPending starts ours.
		r.syncsWaiting.Add(key, revisions)
		ctrl.LoggerFrom(ctx).Info("waiting for Argo CD's running operation before syncing", "application", key)
		return nil
	}
	if err != nil {
		r.syncsWaiting.Add(key, revisions)
		r.recorder.Eventf(u, nil, syncSource(u, revisions), corev1.EventTypeWarning, ReasonAPIFailed, "Sync", "starting a sync after the convergence: %s", err.Error())
		return fmt.Errorf("syncing Application %s: %w", key, err)
	}
	r.syncsWaiting.Remove(key)
	r.recorder.Eventf(u, nil, syncSource(u, revisions), corev1.EventTypeNormal, ReasonSyncStarted, "Sync",
		"claimwarden converged the volumeClaimTemplates of revision %s and started a sync", strings.Join(revisions, ","))
	return nil
}

// syncRequestFor is the sync claimwarden starts after converging to the
// proposal made at revisions (one per source). argocd-server refuses a
// revision other than the target revision for an automated Application, so
// none is given there; a manual one is pinned to the revisions evaluated.
func syncRequestFor(app *application, revisions []string) SyncRequest {
	req := SyncRequest{
		Prune: app.autoPrune(),
		Infos: []Info{{Name: "Reason", Value: "claimwarden converged the volumeClaimTemplates of revision " + strings.Join(revisions, ",")}},
	}
	switch {
	case app.automated():
	case app.multiSource():
		req.Revisions = revisions
		for i := range revisions {
			req.SourcePositions = append(req.SourcePositions, int64(i+1))
		}
	case len(revisions) == 1:
		req.Revision = revisions[0]
	}
	return req
}

// read gets an Application uncached.
func (r *Applications) read(ctx context.Context, key types.NamespacedName) (*unstructured.Unstructured, *application, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ApplicationGVK)
	if err := r.reader.Get(ctx, key, u); err != nil {
		return nil, nil, fmt.Errorf("reading Application %s: %w", key, err)
	}
	app, err := applicationOf(u)
	if err != nil {
		return nil, nil, fmt.Errorf("application %s: %w", key, err)
	}
	return u, app, nil
}

// syncSource names the Application and the revisions a sync after a
// convergence is about, for its events' annotations.
func syncSource(u *unstructured.Unstructured, revisions []string) v1alpha1.Source {
	return v1alpha1.Source{Kind: ApplicationKind, Namespace: u.GetNamespace(), Name: u.GetName(), Revision: strings.Join(revisions, ",")}
}
