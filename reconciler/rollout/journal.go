package rollout

import (
	"context"
	"fmt"
	"sync"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// rolloutJournal keeps the StatefulSet being re-created in its
// VolumeClaimRollout's status, so the record outlives a controller restart
// and the orphan delete (which strips owner references instead of cascading).
//
// With the record it writes the proposal being converged to (status.proposal):
// a controller killed after the delete and restarted finds no proposal in its
// empty store, and once the GitOps tool applied the commit none comes again;
// without the recorded source the finished rollout would be reported as the
// StatefulSet's own and the commit would never get its final status.
//
// The controller's cache lags its own writes, and a StatefulSet's delete
// event can overtake the record's into it. A reconcile that then found no
// record and the StatefulSet gone would forget it, never to re-create it; one
// that found a record already cleared could re-create an old object or clear
// a newer record. So whenever the cache's answer could be either (a record,
// or none while the StatefulSet is missing or being deleted: the states of a
// re-create, which are rare) it is read again from the API server.
type rolloutJournal struct {
	// client serves cached reads and the writes; reader reads the API server.
	client client.Client
	reader client.Reader

	mu      sync.Mutex
	intents map[types.NamespacedName]*v1alpha1.Proposal
}

// intend names the proposal the next Save for key records with it.
func (j *rolloutJournal) intend(key types.NamespacedName, p *v1alpha1.Proposal) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.intents == nil {
		j.intents = map[types.NamespacedName]*v1alpha1.Proposal{}
	}
	if p == nil {
		delete(j.intents, key)
		return
	}
	j.intents[key] = p
}

func (j *rolloutJournal) intent(key types.NamespacedName) *v1alpha1.Proposal {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.intents[key]
}

func (j *rolloutJournal) Save(ctx context.Context, key types.NamespacedName, rec v1alpha1.PendingRecreate) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vcr := &v1alpha1.VolumeClaimRollout{}
		// Uncached: a lagging copy would only conflict.
		err := j.reader.Get(ctx, key, vcr)
		if apierrors.IsNotFound(err) {
			vcr = &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
			err = j.client.Create(ctx, vcr, client.FieldOwner(v1alpha1.ControllerName))
		}
		if err != nil {
			return fmt.Errorf("recording the re-create of StatefulSet %s: %w", key, err)
		}
		vcr.Status.PendingRecreate = &rec
		if p := j.intent(key); p != nil {
			vcr.Status.Proposal = p
			// The conditions still describe the templates before the
			// re-create: with the new proposal beside them, Ready=True
			// would say its commit's claims are done before they are.
			conditions.MarkUnknown(vcr, meta.ReadyCondition, v1alpha1.ReasonProgressing,
				"re-creating the StatefulSet with the templates of %s", outcome.Describe(p.Source))
		}
		return j.client.Status().Update(ctx, vcr, client.FieldOwner(v1alpha1.ControllerName))
	})
}

// Load answers from the cache when it says no record and the StatefulSet
// stands, and from the API server otherwise (see rolloutJournal).
func (j *rolloutJournal) Load(ctx context.Context, key types.NamespacedName) (*v1alpha1.PendingRecreate, error) {
	vcr := &v1alpha1.VolumeClaimRollout{}
	err := j.client.Get(ctx, key, vcr)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if vcr.Status.PendingRecreate == nil {
		standing, err := j.standing(ctx, key)
		if err != nil || standing {
			return nil, err
		}
	}
	vcr = &v1alpha1.VolumeClaimRollout{}
	if err := j.reader.Get(ctx, key, vcr); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return vcr.Status.PendingRecreate, nil
}

// standing reports whether the cache holds the StatefulSet of key, not being
// deleted.
func (j *rolloutJournal) standing(ctx context.Context, key types.NamespacedName) (bool, error) {
	var sts appsv1.StatefulSet
	if err := j.client.Get(ctx, key, &sts); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return sts.DeletionTimestamp.IsZero(), nil
}

func (j *rolloutJournal) Clear(ctx context.Context, key types.NamespacedName) error {
	vcr := &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"pendingRecreate":null}}`))
	return client.IgnoreNotFound(j.client.Status().Patch(ctx, vcr, patch, client.FieldOwner(v1alpha1.ControllerName)))
}
