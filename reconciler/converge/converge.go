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
	"time"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Journal durably records the StatefulSet being re-created. The rollout
// controller keeps it in VolumeClaimRollout status.pendingRecreate; it must
// survive a restart of the process, so it cannot live in memory.
type Journal interface {
	Save(ctx context.Context, key types.NamespacedName, rec v1alpha1.PendingRecreate) error
	// Load returns nil, nil when nothing is recorded for key.
	Load(ctx context.Context, key types.NamespacedName) (*v1alpha1.PendingRecreate, error)
	Clear(ctx context.Context, key types.NamespacedName) error
}

// Defaults for the zero values of Converger's options.
const (
	DefaultFieldOwner   = "claimwarden"
	DefaultWaitTimeout  = 2 * time.Minute
	DefaultPollInterval = 200 * time.Millisecond
)

// ErrSelectorChanged is returned when desired selects other Pods than live: the
// re-created StatefulSet would not adopt the running Pods and would then fail to
// create Pods of the same names, so it is never attempted.
var ErrSelectorChanged = errors.New("spec.selector differs: a re-created StatefulSet would not adopt its Pods")

// Converger re-creates StatefulSets. Client, Journal and JournalKey are required.
type Converger struct {
	Client  client.Client
	Journal Journal
	// JournalKey returns the key that seals every record written and opens
	// every record read (Record): at least MinKeyLength bytes, kept where the
	// Journal's writers cannot read it. It is asked only when a record is
	// written or found, so a controller starts without it.
	JournalKey func(ctx context.Context) ([]byte, error)
	// Reader serves every read; defaults to Client. Pass the manager's API
	// reader: a cache lags, and the decisions here (is the old object gone, who
	// created the new one) must be made on the server's current state; a cache
	// that strips managedFields would also hide that we created an object.
	Reader client.Reader
	// FieldOwner is the field manager of our writes. It also identifies the
	// object we created when a crash hid the outcome of our own create.
	FieldOwner string
	// WaitTimeout bounds one wait for the orphan delete to finish (the garbage
	// collector must remove owner references from Pods and ControllerRevisions
	// and then the orphan finalizer). On timeout the record stays and Resume
	// continues later.
	WaitTimeout time.Duration
	// PollInterval is the delay between reads while waiting.
	PollInterval time.Duration
}

// Converge makes live equal to desired (the complete desired object, e.g. from
// Git). When the API server accepts the change in place (no immutable field
// differs) it is written with an update. Otherwise live is orphan-deleted
// (preconditions: its UID and resourceVersion) and Prepare(desired) created,
// after recording it in the Journal.
//
// Errors: a conflict (apierrors.IsConflict) when live changed since it was
// read, nothing deleted; ErrSelectorChanged; ErrRecreatedElsewhere when someone
// else re-created the object meanwhile (nothing created, record cleared). Any
// other error after the delete keeps the record: Resume completes the
// re-create, so the StatefulSet is never left deleted.
func (c *Converger) Converge(ctx context.Context, live, desired *appsv1.StatefulSet) error {
	key := client.ObjectKeyFromObject(live)
	obj := Prepare(desired)
	inheritUnset(obj, live)
	if obj.Name != live.Name || obj.Namespace != live.Namespace {
		return fmt.Errorf("desired statefulset %s/%s is not %s", obj.Namespace, obj.Name, key)
	}
	if live.DeletionTimestamp != nil {
		return fmt.Errorf("statefulset %s is being deleted by someone else; not converging it", key)
	}
	if !equality.Semantic.DeepEqual(live.Spec.Selector, obj.Spec.Selector) {
		return fmt.Errorf("statefulset %s: %w", key, ErrSelectorChanged)
	}

	recreate, err := c.needsRecreate(ctx, live, obj)
	if err != nil || !recreate {
		return err
	}
	if err := c.preflightCreate(ctx, obj); err != nil {
		return err
	}

	jkey, err := c.journalKey(ctx)
	if err != nil {
		return err
	}
	rec, err := Record(jkey, string(live.UID), obj)
	if err != nil {
		return fmt.Errorf("record re-create of statefulset %s: %w", key, err)
	}
	if err := c.Journal.Save(ctx, key, rec); err != nil {
		return fmt.Errorf("record re-create of statefulset %s: %w", key, err)
	}
	err = c.Client.Delete(ctx, live,
		client.PropagationPolicy(metav1.DeletePropagationOrphan),
		client.Preconditions{UID: &live.UID, ResourceVersion: &live.ResourceVersion})
	switch {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		// The server refused the delete, so the object is as someone else left
		// it; the record describes a delete that never happened.
		if cerr := c.Journal.Clear(ctx, key); cerr != nil {
			return errors.Join(fmt.Errorf("orphan-delete statefulset %s: %w", key, err), cerr)
		}
		return fmt.Errorf("orphan-delete statefulset %s: %w", key, err)
	case err != nil:
		// The outcome is unknown (a timeout may hide a delete that happened), so
		// the record stays and Resume decides from what the server shows.
		return fmt.Errorf("orphan-delete statefulset %s: %w", key, err)
	}
	return c.finish(ctx, key, string(live.UID), obj)
}

// needsRecreate asks the server, by a dry-run update, whether desired can be
// written in place. If so it writes it and reports false. A refusal caused only
// by immutable fields reports true; any other refusal is returned, since the
// same object would fail to create as well.
func (c *Converger) needsRecreate(ctx context.Context, live, obj *appsv1.StatefulSet) (bool, error) {
	upd := obj.DeepCopy()
	upd.UID = live.UID
	upd.ResourceVersion = live.ResourceVersion
	err := c.Client.Update(ctx, upd, client.DryRunAll, client.FieldOwner(c.fieldOwner()))
	switch {
	case err == nil:
		upd = obj.DeepCopy()
		upd.UID = live.UID
		upd.ResourceVersion = live.ResourceVersion
		if err := c.Client.Update(ctx, upd, client.FieldOwner(c.fieldOwner())); err != nil {
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
	err := c.Client.Create(ctx, obj.DeepCopy(), client.DryRunAll, client.FieldOwner(c.fieldOwner()))
	if err == nil || apierrors.IsAlreadyExists(err) {
		return nil
	}
	return fmt.Errorf("statefulset %s would not be re-created (dry run): %w", client.ObjectKeyFromObject(obj), err)
}

func (c *Converger) journalKey(ctx context.Context) ([]byte, error) {
	if c.JournalKey == nil {
		return nil, errors.New("converger has no journal key: no StatefulSet is re-created without a sealed record")
	}
	key, err := c.JournalKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("journal key: %w", err)
	}
	return key, nil
}

func (c *Converger) reader() client.Reader {
	if c.Reader != nil {
		return c.Reader
	}
	return c.Client
}

func (c *Converger) fieldOwner() string {
	if c.FieldOwner != "" {
		return c.FieldOwner
	}
	return DefaultFieldOwner
}

func (c *Converger) waitTimeout() time.Duration {
	if c.WaitTimeout > 0 {
		return c.WaitTimeout
	}
	return DefaultWaitTimeout
}

func (c *Converger) pollInterval() time.Duration {
	if c.PollInterval > 0 {
		return c.PollInterval
	}
	return DefaultPollInterval
}
