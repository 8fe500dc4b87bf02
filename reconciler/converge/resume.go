package converge

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/crashpoint"
)

// Resume finishes a re-create recorded in the Journal for key; call it before
// anything else on every reconcile. It never waits:
//   - no record: NothingRecorded;
//   - the old object still exists and is not being deleted: the delete never
//     happened, so the record is dropped and NothingRecorded returned (the
//     caller converges afresh);
//   - the old object is being deleted: Waiting, record kept;
//   - the old object is gone: the recorded object is created (or found, created
//     by us before a crash), the record cleared: Recreated.
//
// ErrRecreatedElsewhere (record cleared) means another actor re-created the
// object. ErrJournalRejected means the record is not provably ours (see
// Record): nothing is created and the record stays.
func (c *Converger) Resume(ctx context.Context, key types.NamespacedName) (Progress, error) {
	rec, err := c.opts.Journal.Load(ctx, key)
	if err != nil || rec == nil {
		return NothingRecorded, err
	}
	jkey, err := c.journalKey(ctx)
	if err != nil {
		return NothingRecorded, err
	}
	obj, err := open(jkey, key, rec)
	if err != nil {
		return NothingRecorded, fmt.Errorf("%w: the record for statefulset %s: %v", ErrJournalRejected, key, err)
	}

	cur, err := c.get(ctx, key)
	if err != nil {
		return NothingRecorded, err
	}
	if cur != nil && string(cur.UID) == rec.UID && cur.DeletionTimestamp == nil {
		return NothingRecorded, c.clear(ctx, key, nil)
	}
	return c.finishIfGone(ctx, key, rec.UID, obj)
}

// finishIfGone looks once whether the object with oldUID is gone and, if so,
// creates obj and clears the record. It is the common tail of Converge and
// Resume and is safe to repeat: each step first looks at what the server holds.
func (c *Converger) finishIfGone(ctx context.Context, key types.NamespacedName, oldUID string, obj *appsv1.StatefulSet) (Progress, error) {
	cur, err := c.get(ctx, key)
	if err != nil {
		return NothingRecorded, err
	}
	if cur != nil && string(cur.UID) == oldUID {
		// The garbage collector is still orphaning dependents, or another
		// finalizer holds the object.
		return Waiting, nil
	}
	if cur == nil {
		err = c.opts.Client.Create(ctx, obj.DeepCopy(), client.FieldOwner(c.opts.FieldOwner))
		if err == nil {
			crashpoint.Reached(crashpoint.Created)
			return c.cleared(ctx, key)
		}
		if !apierrors.IsAlreadyExists(err) {
			// Keep the record: the object is missing and Resume must retry.
			return NothingRecorded, fmt.Errorf("re-create statefulset %s: %w", key, err)
		}
		// Someone created it between our read and our create.
		if cur, err = c.get(ctx, key); err != nil {
			return NothingRecorded, err
		}
		if cur == nil {
			return NothingRecorded, fmt.Errorf("re-create statefulset %s: exists and vanished again; will retry", key)
		}
	}
	if c.createdByUs(cur) {
		return c.cleared(ctx, key)
	}
	return NothingRecorded, c.clear(ctx, key, fmt.Errorf("%w: %s now has uid %s (managers %v); not creating a duplicate",
		ErrRecreatedElsewhere, key, cur.UID, managers(cur)))
}

// cleared drops the record of a finished re-create.
func (c *Converger) cleared(ctx context.Context, key types.NamespacedName) (Progress, error) {
	if err := c.clear(ctx, key, nil); err != nil {
		return NothingRecorded, err
	}
	return Recreated, nil
}

// createdByUs recognises a StatefulSet written by this Converger's field owner:
// we create with that manager, so a crash between our create and the journal
// clear is not mistaken for a re-create by GitOps. The object cannot predate the
// record, since the record's object was deleted first.
func (c *Converger) createdByUs(sts *appsv1.StatefulSet) bool {
	for _, m := range sts.ManagedFields {
		if m.Manager == c.opts.FieldOwner {
			return true
		}
	}
	return false
}

func managers(sts *appsv1.StatefulSet) []string {
	var out []string
	for _, m := range sts.ManagedFields {
		out = append(out, m.Manager)
	}
	return out
}

// get reads key from the server; nil without error when it does not exist.
func (c *Converger) get(ctx context.Context, key types.NamespacedName) (*appsv1.StatefulSet, error) {
	var sts appsv1.StatefulSet
	err := c.opts.Reader.Get(ctx, key, &sts)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get statefulset %s: %w", key, err)
	}
	return &sts, nil
}

// clear drops the record and returns cause, joined with a failure to clear.
func (c *Converger) clear(ctx context.Context, key types.NamespacedName, cause error) error {
	if err := c.opts.Journal.Clear(ctx, key); err != nil {
		return errors.Join(cause, fmt.Errorf("clear journal record of statefulset %s: %w", key, err))
	}
	return cause
}
