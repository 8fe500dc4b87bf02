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
// a newer record. So the journal remembers what the API server answered to
// its own last write of each key (see wrote) and reads:
//   - from that memory while the cache is older than it: the cache lags us;
//   - from the cache once it holds our write or a newer one: a newer one is
//     another writer's (a person clearing a refused record), already shown;
//   - from the API server when it remembers nothing for the key (a restarted
//     process, a new leader) and the cache's answer could be either: a
//     record, or none while the StatefulSet is missing or being deleted.
//
// Save writes over the newer of the cache's copy and the memory; after a
// conflict, someone else wrote, so it reads the API server.
type rolloutJournal struct {
	// client serves cached reads and the writes; reader reads the API server.
	client client.Client
	reader client.Reader

	mu      sync.Mutex
	intents map[types.NamespacedName]*v1alpha1.Proposal
	// written holds what the API server answered to our last journal write.
	written map[types.NamespacedName]*v1alpha1.VolumeClaimRollout
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
	read := j.base
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vcr, err := j.onto(ctx, key, read)
		// A conflict means someone else wrote: only the API server knows what.
		read = j.uncached
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
		if err := j.client.Status().Update(ctx, vcr, client.FieldOwner(v1alpha1.ControllerName)); err != nil {
			return err
		}
		j.wrote(key, vcr)
		return nil
	})
	if err != nil {
		// A failed write may still have been made: until the next one,
		// the API server decides, as for a fresh process.
		j.wrote(key, nil)
	}
	return err
}

// onto returns the VolumeClaimRollout of key as read says, created when
// read finds none.
func (j *rolloutJournal) onto(ctx context.Context, key types.NamespacedName, read func(context.Context, types.NamespacedName) (*v1alpha1.VolumeClaimRollout, error)) (*v1alpha1.VolumeClaimRollout, error) {
	vcr, err := read(ctx, key)
	if err != nil || vcr != nil {
		return vcr, err
	}
	vcr = &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	err = j.client.Create(ctx, vcr, client.FieldOwner(v1alpha1.ControllerName))
	if !apierrors.IsAlreadyExists(err) {
		return vcr, err
	}
	// The cache had not seen it yet.
	if vcr, err = j.uncached(ctx, key); err == nil && vcr == nil {
		err = fmt.Errorf("VolumeClaimRollout %s exists and vanished again", key)
	}
	return vcr, err
}

// Load answers as rolloutJournal says.
func (j *rolloutJournal) Load(ctx context.Context, key types.NamespacedName) (*v1alpha1.PendingRecreate, error) {
	cached, err := j.cached(ctx, key)
	if err != nil {
		return nil, err
	}
	if mine := j.remembered(key); mine != nil {
		if rec, ok := j.answer(key, cached, mine); ok {
			return rec, nil
		}
	}
	if cached == nil || cached.Status.PendingRecreate == nil {
		standing, err := j.standing(ctx, key)
		if err != nil || standing {
			return nil, err
		}
	}
	vcr, err := j.uncached(ctx, key)
	if vcr == nil || err != nil {
		return nil, err
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
	// The patch's answer is decoded into vcr: the object as the server holds it.
	vcr := &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"pendingRecreate":null}}`))
	if err := j.client.Status().Patch(ctx, vcr, patch, client.FieldOwner(v1alpha1.ControllerName)); err != nil {
		// Gone, or a write that may still have been made (see Save).
		j.wrote(key, nil)
		return client.IgnoreNotFound(err)
	}
	j.wrote(key, vcr)
	return nil
}
