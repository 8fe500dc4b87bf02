// Package converge replaces a StatefulSet whose immutable fields (above all
// spec.volumeClaimTemplates) must change, without touching its Pods: the object
// is orphan-deleted and re-created, and the StatefulSet controller re-adopts the
// Pods and ControllerRevisions. Because the object is briefly absent, the object
// to create is written to a durable Journal first, and Resume finishes the job
// after a crash.
package converge

import (
	"context"
	"errors"
	"fmt"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/crashpoint"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Journal durably records the StatefulSet being re-created. The rollout
// controller keeps it in VolumeClaimRollout status.pendingRecreate; it must
// survive a restart of the process, so it cannot live in memory.
type Journal interface {
	Save(ctx context.Context, key types.NamespacedName, rec v1alpha1.PendingRecreate) error
	// Load returns nil, nil when nothing is recorded for key. It must see
	// every Save and Clear made before it, at least while the StatefulSet is
	// missing or being deleted: Resume acts on what it returns, and a missed
	// record leaves a deleted StatefulSet for good.
	Load(ctx context.Context, key types.NamespacedName) (*v1alpha1.PendingRecreate, error)
	Clear(ctx context.Context, key types.NamespacedName) error
}

// ErrSelectorChanged is returned when desired selects other Pods than live: the
// re-created StatefulSet would not adopt the running Pods and would then fail to
// create Pods of the same names, so it is never attempted.
var ErrSelectorChanged = errors.New("spec.selector differs: a re-created StatefulSet would not adopt its Pods")

// Converger re-creates StatefulSets; make one with New.
type Converger struct {
	opts Options
}

// New returns a Converger for opts; Client, Journal and JournalKey are required.
func New(opts Options) *Converger {
	return &Converger{opts: opts.withDefaults()}
}

// Converge makes live equal to desired (the complete desired object, e.g. from
// Git). When the API server accepts the change in place (no immutable field
// differs) it is written with an update: Updated. Otherwise live is
// orphan-deleted (preconditions: its UID and resourceVersion) after recording
// Prepare(desired) in the Journal, and Prepare(desired) is created if the old
// object is already gone: Recreated. If it is not gone yet, Converge returns
// Waiting at once, the record kept, and Resume creates it later. While live
// has not adopted its Pods and ControllerRevisions yet (see unadopted),
// nothing is recorded or deleted: Adopting, ask again shortly.
//
// Errors: a conflict (apierrors.IsConflict) when live changed since it was
// read, nothing deleted; ErrSelectorChanged; ErrRecreatedElsewhere when someone
// else re-created the object meanwhile (nothing created, record cleared). Any
// other error after the delete keeps the record: Resume completes the
// re-create, so the StatefulSet is never left deleted.
func (c *Converger) Converge(ctx context.Context, live, desired *appsv1.StatefulSet) (Progress, error) {
	key := client.ObjectKeyFromObject(live)
	obj := Prepare(desired)
	inheritUnset(obj, live)
	if obj.Name != live.Name || obj.Namespace != live.Namespace {
		return NothingRecorded, fmt.Errorf("desired statefulset %s/%s is not %s", obj.Namespace, obj.Name, key)
	}
	if live.DeletionTimestamp != nil {
		return NothingRecorded, fmt.Errorf("statefulset %s is being deleted by someone else; not converging it", key)
	}
	if !equality.Semantic.DeepEqual(live.Spec.Selector, obj.Spec.Selector) {
		return NothingRecorded, fmt.Errorf("statefulset %s: %w", key, ErrSelectorChanged)
	}

	recreate, err := c.needsRecreate(ctx, live, obj)
	if err != nil {
		return NothingRecorded, err
	}
	if !recreate {
		return Updated, nil
	}
	if err := c.preflightCreate(ctx, obj); err != nil {
		return NothingRecorded, err
	}
	why, err := c.unadopted(ctx, live)
	if err != nil {
		return NothingRecorded, err
	}
	if why != "" {
		log.FromContext(ctx).V(1).Info("not orphan-deleting the StatefulSet yet: it has not adopted its dependents", "why", why)
		return Adopting, c.nudgeAdoption(ctx, live, why)
	}

	jkey, err := c.journalKey(ctx)
	if err != nil {
		return NothingRecorded, err
	}
	rec, err := Record(jkey, string(live.UID), obj)
	if err != nil {
		return NothingRecorded, fmt.Errorf("record re-create of statefulset %s: %w", key, err)
	}
	if err := c.opts.Journal.Save(ctx, key, rec); err != nil {
		return NothingRecorded, fmt.Errorf("record re-create of statefulset %s: %w", key, err)
	}
	crashpoint.Reached(crashpoint.JournalWritten)
	err = c.opts.Client.Delete(ctx, live,
		client.PropagationPolicy(metav1.DeletePropagationOrphan),
		client.Preconditions{UID: &live.UID, ResourceVersion: &live.ResourceVersion})
	switch {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		// The server refused the delete, so the object is as someone else left
		// it; the record describes a delete that never happened.
		if cerr := c.opts.Journal.Clear(ctx, key); cerr != nil {
			return NothingRecorded, errors.Join(fmt.Errorf("orphan-delete statefulset %s: %w", key, err), cerr)
		}
		return NothingRecorded, fmt.Errorf("orphan-delete statefulset %s: %w", key, err)
	case err != nil:
		// The outcome is unknown (a timeout may hide a delete that happened), so
		// the record stays and Resume decides from what the server shows.
		return NothingRecorded, fmt.Errorf("orphan-delete statefulset %s: %w", key, err)
	}
	crashpoint.Reached(crashpoint.OrphanDeleted)
	return c.finishIfGone(ctx, key, string(live.UID), obj)
}

// needsRecreate asks the server, by a dry-run update, whether desired can be
// written in place. If so it writes it and reports false. A refusal caused only
// by immutable fields reports true; any other refusal is returned, since the
// same object would fail to create as well.
func (c *Converger) needsRecreate(ctx context.Context, live, obj *appsv1.StatefulSet) (bool, error) {
	upd := obj.DeepCopy()
	upd.UID = live.UID
	upd.ResourceVersion = live.ResourceVersion
	err := c.opts.Client.Update(ctx, upd, client.DryRunAll, client.FieldOwner(c.opts.FieldOwner))
	switch {
	case err == nil:
		upd = obj.DeepCopy()
		upd.UID = live.UID
		upd.ResourceVersion = live.ResourceVersion
		if err := c.opts.Client.Update(ctx, upd, client.FieldOwner(c.opts.FieldOwner)); err != nil {
			return false, fmt.Errorf("update statefulset %s in place: %w", client.ObjectKeyFromObject(obj), err)
		}
		return false, nil
	case onlyImmutableCauses(err):
		return true, nil
	default:
		return false, fmt.Errorf("check statefulset %s update: %w", client.ObjectKeyFromObject(obj), err)
	}
}

// preflightCreate validates the object to create before the old one is
// deleted. The server validates and admits a dry-run create completely and only
// then finds the name taken, so AlreadyExists means "would be accepted"; any
// other error means the create after the delete would fail.
func (c *Converger) preflightCreate(ctx context.Context, obj *appsv1.StatefulSet) error {
	err := c.opts.Client.Create(ctx, obj.DeepCopy(), client.DryRunAll, client.FieldOwner(c.opts.FieldOwner))
	if err == nil || apierrors.IsAlreadyExists(err) {
		return nil
	}
	return fmt.Errorf("statefulset %s would not be re-created (dry run): %w", client.ObjectKeyFromObject(obj), err)
}

func (c *Converger) journalKey(ctx context.Context) ([]byte, error) {
	if c.opts.JournalKey == nil {
		return nil, errors.New("converger has no journal key: no StatefulSet is re-created without a sealed record")
	}
	key, err := c.opts.JournalKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("journal key: %w", err)
	}
	return key, nil
}
