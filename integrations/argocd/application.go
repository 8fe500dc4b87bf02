package argocd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Event reasons on Applications.
const (
	ReasonAPIFailed       = "ClaimwardenArgoCDAPIFailed"
	ReasonProposed        = "ClaimwardenProposed"
	ReasonNothingProposed = "ClaimwardenNothingToDo"
	ReasonSyncStarted     = "ClaimwardenSyncStarted"
	ReasonRefreshed       = "ClaimwardenRefreshed"
)

// ApplicationReconciler turns Argo CD syncs blocked by immutable
// volumeClaimTemplates into proposals: when an Application's StatefulSet
// cannot be synced, it reads the StatefulSet Argo CD renders from Git and
// proposes it if its volumeClaimTemplates differ from the live object's.
type ApplicationReconciler struct {
	// Client reads Applications from the manager's cache.
	Client client.Client
	// Reader reads StatefulSets and Applications uncached: a StatefulSet
	// must be current, and a sync decision needs the Application as it is.
	Reader    client.Reader
	API       *Client
	Proposals *proposal.Store
	Recorder  events.EventRecorder
	// SyncManualApps lets claimwarden start a sync of an Application
	// without automated sync after converging its StatefulSet; otherwise it
	// only refreshes it and a person syncs.
	SyncManualApps bool

	// done holds, per Application, the revisions and spec last turned into
	// proposals, so the API is asked once for them.
	done sync.Map
	// said keeps the events said once ("nothing to do").
	said proposal.Said
	// pending holds, per Application, the revisions of a sync to start once
	// the operation running when claimwarden converged has ended.
	pending sync.Map
}

// Reconcile runs the phases for one Application: start a sync that waited
// for an operation; skip what is not blocked (dropping proposals Git no
// longer asks for); read the desired StatefulSets from Argo CD; propose;
// drop proposals for StatefulSets gone from the application.
func (r *ApplicationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	owner := proposal.Owner{Kind: ApplicationKind, Namespace: req.Namespace, Name: req.Name}

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ApplicationGVK)
	if err := r.Client.Get(ctx, req.NamespacedName, u); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(ctx, owner, req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if u.GetDeletionTimestamp() != nil {
		// Argo CD is deleting it (and maybe its resources): nothing to converge.
		r.forget(ctx, owner, req.NamespacedName)
		return ctrl.Result{}, nil
	}
	app, err := applicationOf(u)
	if err != nil {
		// Argo CD cannot work with it either; a fix is an update, which comes back here.
		r.sayOnce(u, log, corev1.EventTypeWarning, ReasonNothingProposed, fmt.Sprintf("the Application cannot be read: %v", err))
		return ctrl.Result{}, nil
	}
	if err := r.syncPending(ctx, u, app); err != nil {
		return ctrl.Result{}, err
	}

	blocked, failed := app.blocked()
	if len(blocked) == 0 {
		return ctrl.Result{}, r.Proposals.DropUnconverged(ctx, r.Reader, owner, nil)
	}
	doneKey := app.revisionKey() + "/" + specHash(u)
	if last, ok := r.done.Load(req.NamespacedName); ok && last == doneKey {
		return ctrl.Result{}, nil
	}

	managed, err := r.API.ManagedStatefulSets(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, r.apiFailed(ctx, u, owner, err)
	}
	r.Proposals.SetSourceError(ctx, owner, "")

	repository, revision := app.provenance()
	source := v1alpha1.Source{Kind: ApplicationKind, Namespace: req.Namespace, Name: req.Name, Repository: repository, Revision: revision}
	isBlocked := map[types.NamespacedName]bool{}
	for _, k := range blocked {
		isBlocked[k] = true
	}
	inApp := map[types.NamespacedName]bool{}
	proposedNow := map[types.NamespacedName]bool{}
	var proposed []string
	for _, m := range managed {
		if m.Target == nil {
			continue // Git no longer holds it: Argo CD prunes it or leaves it
		}
		inApp[m.Key] = true
		if !isBlocked[m.Key] {
			continue
		}
		var live appsv1.StatefulSet
		if err := r.Reader.Get(ctx, m.Key, &live); err != nil {
			if apierrors.IsNotFound(err) {
				continue // Argo CD creates it; a new StatefulSet needs no convergence
			}
			return ctrl.Result{}, fmt.Errorf("reading StatefulSet %s of Application %s: %w", m.Key, req.NamespacedName, err)
		}
		if diff.TemplatesEqual(live.Spec.VolumeClaimTemplates, m.Target.Spec.VolumeClaimTemplates) {
			continue // not what blocks the sync
		}
		revisions := app.revisions()
		r.Proposals.Set(ctx, proposal.Proposal{
			StatefulSet:   m.Target,
			Source:        source,
			IgnoredLabels: app.templateLabelKeys(),
			Reapply: func(ctx context.Context) error {
				return r.reapply(ctx, req.NamespacedName, revisions)
			},
		})
		proposedNow[m.Key] = true
		proposed = append(proposed, m.Key.String())
	}
	for _, key := range r.Proposals.Owned(owner) {
		if !inApp[key] {
			// Removed from Git: not ours to converge.
			r.Proposals.Delete(ctx, owner, key)
		}
	}
	if err := r.Proposals.DropUnconverged(ctx, r.Reader, owner, proposedNow); err != nil {
		return ctrl.Result{}, err
	}
	r.done.Store(req.NamespacedName, doneKey)
	switch {
	case len(proposed) > 0:
		r.Recorder.Eventf(u, nil, corev1.EventTypeNormal, ReasonProposed, "Propose",
			"revision %s changes the volumeClaimTemplates of %v: claimwarden evaluates and converges them", app.revisionKey(), proposed)
		log.Info("proposed StatefulSets Argo CD cannot sync", "revision", app.revisionKey(), "statefulSets", proposed)
	case failed:
		r.sayOnce(u, log, corev1.EventTypeNormal, ReasonNothingProposed,
			fmt.Sprintf("revision %s changes no StatefulSet's volumeClaimTemplates: its sync failure is not one claimwarden can resolve", app.revisionKey()))
	default:
		log.V(1).Info("no OutOfSync StatefulSet changes its volumeClaimTemplates", "revision", app.revisionKey())
	}
	return ctrl.Result{}, nil
}

// apiFailed reports an Argo CD API failure on the rollouts the application
// proposed for, and returns err so that the controller retries with back-off.
func (r *ApplicationReconciler) apiFailed(ctx context.Context, u *unstructured.Unstructured, owner proposal.Owner, err error) error {
	r.Proposals.SetSourceError(ctx, owner, err.Error())
	r.Recorder.Eventf(u, nil, corev1.EventTypeWarning, ReasonAPIFailed, "ReadDesired", "%s", err.Error())
	return err
}

// forget drops what an Application proposed and what was done for it.
func (r *ApplicationReconciler) forget(ctx context.Context, owner proposal.Owner, key types.NamespacedName) {
	for _, k := range r.Proposals.Owned(owner) {
		r.Proposals.Delete(ctx, owner, k)
	}
	r.done.Delete(key)
	r.pending.Delete(key)
	r.said.Forget(key)
}

func (r *ApplicationReconciler) sayOnce(u *unstructured.Unstructured, log logr.Logger, eventType, reason, msg string) {
	if !r.said.Once(types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, reason, msg) {
		return
	}
	r.Recorder.Eventf(u, nil, eventType, reason, "Skip", "%s", msg)
	log.Info(msg)
}

// specHash identifies an Application's spec: the same revision renders
// other StatefulSets when the spec changes (Helm values, kustomize options).
// The generation cannot: Applications have no status subresource, so it
// also counts status updates.
func specHash(u *unstructured.Unstructured) string {
	b, _ := json.Marshal(u.Object["spec"]) // maps marshal with sorted keys
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
