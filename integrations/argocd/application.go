package argocd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// Event reasons on Applications.
const (
	ReasonAPIFailed       = "ClaimwardenArgoCDAPIFailed"
	ReasonProposed        = source.ReasonProposed
	ReasonNothingProposed = source.ReasonNothingToDo
	ReasonSyncStarted     = "ClaimwardenSyncStarted"
	ReasonRefreshed       = "ClaimwardenRefreshed"
)

// maxPending bounds the Applications whose sync waits for a running
// operation; forgetting one leaves it to Argo CD's own retries or a person.
const maxPending = 1024

// Applications is Argo CD as a source.Tool: an Application's StatefulSet
// whose sync is blocked by immutable volumeClaimTemplates is desired as
// Argo CD renders it from Git; the nudge is a sync (or a refresh).
type Applications struct {
	// See NewApplications.
	reader         client.Reader
	api            *Client
	recorder       outcome.Recorder
	syncManualApps bool
	controlPlane   string
	// clusters are the spokes claimwarden converges in besides its own
	// (WatchOptions.Clusters).
	clusters []Cluster

	// pending holds, per Application, the revisions of a sync to start once
	// the operation running when claimwarden converged has ended.
	syncsWaiting *lru.Cache[types.NamespacedName, []string]
}

var (
	_ source.Tool      = (*Applications)(nil)
	_ source.Forgetter = (*Applications)(nil)
)

// NewApplications returns the Argo CD tool: reader reads Applications,
// AppProjects and argocd-cm uncached, api is argocd-server's,
// syncManualApps lets claimwarden start a sync of an Application without
// automated sync after converging its StatefulSet (otherwise it only
// refreshes it and a person syncs), and controlPlane is Argo CD's own
// namespace (its AppProjects and settings).
func NewApplications(reader client.Reader, api *Client, recorder outcome.Recorder, syncManualApps bool, controlPlane string) *Applications {
	syncsWaiting, _ := lru.New[types.NamespacedName, []string](maxPending) // fails only for a size below 1
	return &Applications{reader: reader, api: api, recorder: recorder, syncManualApps: syncManualApps, controlPlane: controlPlane, syncsWaiting: syncsWaiting}
}

// Kind implements source.Tool.
func (*Applications) Kind() string { return ApplicationKind }

// NewObject implements source.Tool: Applications are read as unstructured
// objects, no Argo CD types are compiled in.
func (*Applications) NewObject() client.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ApplicationGVK)
	return u
}

// Read implements source.Tool: it first starts a sync that waited for an
// operation; an Application is blocked when a StatefulSet of its compared
// revisions cannot be synced (application.blocked).
func (a *Applications) Read(ctx context.Context, obj client.Object) (source.Reading, error) {
	u := obj.(*unstructured.Unstructured)
	app, err := applicationOf(u)
	if err != nil {
		// Argo CD cannot work with it either; a fix is an update, which comes back here.
		return source.Reading{State: source.Waiting, Notes: []source.Note{{Type: corev1.EventTypeWarning, Reason: ReasonNothingProposed,
			Message: fmt.Sprintf("the Application cannot be read: %v", err)}}}, nil
	}
	if err := a.syncPending(ctx, u, app); err != nil {
		return source.Reading{}, err
	}
	if blocked, _ := app.blocked(); len(blocked) == 0 {
		return source.Reading{State: source.Idle}, nil
	}
	if _, err := a.clusterOf(app.Spec.Destination); err != nil {
		return source.Reading{State: source.Skipped, Notes: []source.Note{{Type: corev1.EventTypeNormal, Reason: ReasonNothingProposed,
			Message: fmt.Sprintf("claimwarden leaves the Application alone: %v", err)}}}, nil
	}
	return source.Reading{State: source.Blocked, Revision: app.revisionKey(), Key: app.revisionKey() + "/" + specHash(u)}, nil
}

// Desired implements source.Tool: the blocked StatefulSets as Argo CD
// renders them (its API's managed resources).
func (a *Applications) Desired(ctx context.Context, obj client.Object) (source.Desired, error) {
	u := obj.(*unstructured.Unstructured)
	app, err := applicationOf(u)
	if err != nil {
		return source.Desired{}, err
	}
	c, err := a.clusterOf(app.Spec.Destination)
	if err != nil {
		return source.Desired{}, err
	}
	key := types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}
	managed, err := a.api.ManagedStatefulSets(ctx, key)
	if err != nil {
		return source.Desired{}, &source.ReadError{Reason: ReasonAPIFailed, Action: "ReadDesired", Err: err}
	}
	blocked, failed := app.blocked()
	isBlocked := map[types.NamespacedName]bool{}
	for _, k := range blocked {
		isBlocked[k] = true
	}
	repository, revision := app.provenance()
	d := source.Desired{Cluster: c.Name, Repository: repository, Revision: revision, Revisions: app.revisions(), IgnoredLabels: app.templateLabelKeys()}
	for _, m := range managed {
		switch {
		case m.Target == nil:
			// Git no longer holds it: Argo CD prunes it or leaves it
		case isBlocked[m.Key]:
			d.Candidates = append(d.Candidates, m.Target)
		default:
			d.Others = append(d.Others, m.Key)
		}
	}
	if failed {
		d.NothingToDo = fmt.Sprintf("revision %s changes no StatefulSet's volumeClaimTemplates: its sync failure is not one claimwarden can resolve", app.revisionKey())
	}
	return d, nil
}

// Nudge implements source.Tool (reapply).
func (a *Applications) Nudge(ctx context.Context, n source.Nudge) error {
	return a.reapply(ctx, types.NamespacedName{Namespace: n.Source.Namespace, Name: n.Source.Name}, n.Revisions)
}

// Forget implements source.Forgetter: a sync waiting for an Application gone or
// skipped is not started.
func (a *Applications) Forget(obj types.NamespacedName) { a.syncsWaiting.Remove(obj) }

// specHash identifies an Application's spec: the same revision renders
// other StatefulSets when the spec changes (Helm values, kustomize options).
// The generation cannot: Applications have no status subresource, so it
// also counts status updates.
func specHash(u *unstructured.Unstructured) string {
	b, _ := json.Marshal(u.Object["spec"]) // maps marshal with sorted keys
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
