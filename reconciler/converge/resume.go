package converge

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Resume finishes a re-create recorded in the Journal for key; call it before
// anything else on every reconcile. done reports whether a recorded re-create
// is now complete, whether by this call or by an earlier one that stopped
// before clearing the record. When the old object still exists and is not
// being deleted, the delete never happened: the record is dropped and done is
// false, so the caller converges afresh. ErrRecreatedElsewhere (record
// cleared) means another actor re-created the object. ErrJournalRejected
// means the record is not provably ours (see Record): nothing is created
// and the record stays.
func (c *Converger) Resume(ctx context.Context, key types.NamespacedName) (bool, error) {
	rec, err := c.Journal.Load(ctx, key)
	if err != nil || rec == nil {
		return false, err
	}
	jkey, err := c.journalKey(ctx)
	if err != nil {
		return false, err
	}
	obj, err := open(jkey, key, rec)
	if err != nil {
		return false, fmt.Errorf("%w: the record for statefulset %s: %v", ErrJournalRejected, key, err)
	}

	cur, err := c.get(ctx, key)
	if err != nil {
		return false, err
	}
	if cur != nil && string(cur.UID) == rec.UID && cur.DeletionTimestamp == nil {
		return false, c.clear(ctx, key, nil)
	}
	if err := c.finish(ctx, key, rec.UID, obj); err != nil {
		return false, err
	}
	return true, nil
}

// finish waits for the object with oldUID to be gone, creates obj and clears
// the record. It is the common tail of Converge and Resume and is safe to
// repeat: each step first looks at what the server holds.
func (c *Converger) finish(ctx context.Context, key types.NamespacedName, oldUID string, obj *appsv1.StatefulSet) error {
	cur, err := c.waitGone(ctx, key, oldUID)
	if err != nil {
		return err
	}
	if cur == nil {
		err = c.Client.Create(ctx, obj.DeepCopy(), client.FieldOwner(c.fieldOwner()))
		if err == nil {
			return c.clear(ctx, key, nil)
		}
		if !apierrors.IsAlreadyExists(err) {
			// Keep the record: the object is missing and Resume must retry.
			return fmt.Errorf("re-create statefulset %s: %w", key, err)
		}
		// Someone created it between our read and our create.
		if cur, err = c.get(ctx, key); err != nil {
			return err
		}
		if cur == nil {
			return fmt.Errorf("re-create statefulset %s: exists and vanished again; will retry", key)
		}
	}
	if c.createdByUs(cur) {
		return c.clear(ctx, key, nil)
	}
	return c.clear(ctx, key, fmt.Errorf("%w: %s now has uid %s (managers %v); not creating a duplicate",
		ErrRecreatedElsewhere, key, cur.UID, managers(cur)))
}

// waitGone polls until no object with oldUID exists under key. It returns the
// object found instead (another UID), or nil once the name is free.
func (c *Converger) waitGone(ctx context.Context, key types.NamespacedName, oldUID string) (*appsv1.StatefulSet, error) {
	var found *appsv1.StatefulSet
	err := wait.PollUntilContextTimeout(ctx, c.pollInterval(), c.waitTimeout(), true,
		func(ctx context.Context) (bool, error) {
			cur, err := c.get(ctx, key)
			if err != nil {
				return false, err
			}
			if cur != nil && string(cur.UID) == oldUID {
				return false, nil // the garbage collector is still orphaning dependents
			}
			found = cur
			return true, nil
		})
	if err != nil {
		return nil, fmt.Errorf("wait for orphan delete of statefulset %s (uid %s) to finish: %w", key, oldUID, err)
	}
	return found, nil
}

// createdByUs recognises a StatefulSet written by this Converger's field owner:
// we create with that manager, so a crash between our create and the journal
// clear is not mistaken for a re-create by GitOps. The object cannot predate the
// record, since the record's object was deleted first.
func (c *Converger) createdByUs(sts *appsv1.StatefulSet) bool {
	for _, m := range sts.ManagedFields {
		if m.Manager == c.fieldOwner() {
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
	err := c.reader().Get(ctx, key, &sts)
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
	if err := c.Journal.Clear(ctx, key); err != nil {
		return errors.Join(cause, fmt.Errorf("clear journal record of statefulset %s: %w", key, err))
	}
	return cause
}
